package io.cosched.jdbc;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

/**
 * What {@link LoopBoundDataSource} logs while it is open, as {@code LEVEL message} lines. The module logs through
 * {@code System.Logger}, which the JDK hands to java.util.logging when nothing else takes it, as here.
 */
final class LogLines implements AutoCloseable {

    private final Logger logger = Logger.getLogger(LoopBoundDataSource.class.getName());
    private final List<String> lines = new CopyOnWriteArrayList<>();
    private final Handler handler = new Handler() {
        @Override
        public void publish(LogRecord r) {
            lines.add(r.getLevel() + " " + r.getMessage());
        }

        @Override
        public void flush() {}

        @Override
        public void close() {}
    };

    LogLines() {
        logger.addHandler(handler);
    }

    List<String> lines() {
        return lines;
    }

    @Override
    public void close() {
        logger.removeHandler(handler);
    }
}
