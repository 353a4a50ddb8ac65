package io.cosched.spring.web.stream;

import io.cosched.Internal;
import io.cosched.TimerManager;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/**
 * The streamed responses of coroutine requests whose producers still run, for the server's shutdown to end them
 * ({@link #endAll}). A stream is here from the moment its handler returned it until its request's code has
 * returned; what its connection still flushes after that is the web server's to finish.
 */
@Internal
public final class OpenStreams {

    private static final Log LOG = LogFactory.getLog(OpenStreams.class);

    private final Set<ResponseStream<?>> open = ConcurrentHashMap.newKeySet();
    private final TimerManager timers;
    private volatile boolean stopping; // endAll was called: a stream that opens from now on is told at once
    private volatile boolean cutting; // its grace has passed: a stream that opens from now on is cut at once

    public OpenStreams(TimerManager timers) {
        this.timers = timers;
    }

    void add(ResponseStream<?> stream) {
        open.add(stream);
        // after the add: endAll sets its flag before it walks the set, so one of the two sees the stream
        if (cutting) {
            stream.cut();
        } else if (stopping) {
            stream.serverStopping();
        }
    }

    void remove(ResponseStream<?> stream) {
        open.remove(stream);
    }

    int size() {
        return open.size();
    }

    /**
     * Ends every open stream: server-sent events at once and cleanly, any other stream once {@code grace} has passed,
     * by closing its connection. Called when the server begins to shut down (a second call changes nothing);
     * returns at once.
     */
    public void endAll(Duration grace) {
        synchronized (this) {
            if (stopping) {
                return;
            }
            stopping = true;
        }
        int count = 0;
        for (ResponseStream<?> s : open) {
            s.serverStopping();
            count++;
        }
        if (count > 0 && LOG.isInfoEnabled()) {
            LOG.info("Shutting down with " + count + " open streams: server-sent events end now, other streams have "
                    + grace + " (cosched.web.stream.shutdown-grace) before they are cut");
        }
        if (grace.isZero()) {
            cutAll(grace);
        } else {
            timers.addTimer(grace, () -> cutAll(grace));
        }
    }

    private void cutAll(Duration grace) {
        cutting = true;
        int count = 0;
        for (ResponseStream<?> s : open) {
            s.cut();
            count++;
        }
        if (count > 0 && LOG.isInfoEnabled()) {
            LOG.info("Cut " + count + " streams still open " + grace + " after the shutdown began"
                    + " (cosched.web.stream.shutdown-grace)");
        }
    }
}
