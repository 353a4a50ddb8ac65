package io.cosched.jdbc;

import io.cosched.IOManager;
import io.cosched.Timer;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.LongAdder;
import org.jspecify.annotations.Nullable;

/**
 * Ends the statement of a borrow whose coroutine was interrupted, if it runs on for longer than
 * {@code cancelAfter}: the database's cancel (PostgreSQL's cancel request, MariaDB's and MySQL's
 * {@code KILL QUERY}, each over a connection of its own; see {@link Database#cancel}), sent from a
 * coroutine when the loop's timer fires. The driver then fails the statement (SQLState 57014 on
 * PostgreSQL, 70100 on MariaDB and MySQL) and the connection stays usable. Counts what it did, for the
 * data source's numbers.
 */
final class StatementCanceller {

    private static final System.Logger LOG = System.getLogger(StatementCanceller.class.getName());

    /** How one database cancels the statement a connection runs. */
    interface Cancel {
        void cancel(Connection connection) throws SQLException;
    }

    private final IOManager io;
    private final Duration cancelAfter;
    private final Cancel how;
    private final LongAdder deferred = new LongAdder();
    private final LongAdder cancelled = new LongAdder();

    StatementCanceller(IOManager io, Duration cancelAfter, Cancel how) {
        this.io = io;
        this.cancelAfter = cancelAfter;
        this.how = how;
    }

    /** An interrupt of a borrower was held back until its connection is back in the connection pool. */
    void deferred() {
        deferred.increment();
    }

    /**
     * Runs {@code cancel} in a coroutine {@code cancelAfter} from now; called on the interrupting thread.
     *
     * @return the timer, to be cancelled when the borrow ends first; {@code null} when the IOManager is stopping
     */
    @Nullable
    Timer schedule(Runnable cancel) {
        try {
            return io.timers().addTimer(cancelAfter, () -> {
                try {
                    io.execute(cancel);
                } catch (RejectedExecutionException stopping) {
                    // the IOManager is stopping: the statement ends with the connection
                }
            });
        } catch (RejectedExecutionException stopping) {
            return null;
        }
    }

    /** Asks the server to cancel the statement {@code connection} runs now; blocks for one round trip. */
    void cancel(Connection connection) {
        try {
            how.cancel(connection);
            cancelled.increment();
            LOG.log(
                    System.Logger.Level.DEBUG,
                    () -> "cancelled the statement of " + connection + ": its request was cancelled "
                            + cancelAfter.toMillis() + " ms before and it still ran");
        } catch (SQLException e) {
            LOG.log(
                    System.Logger.Level.DEBUG,
                    () -> "could not cancel the statement of " + connection + " (the connection goes on as it is)",
                    e);
        }
    }

    long deferredInterrupts() {
        return deferred.sum();
    }

    long cancelledStatements() {
        return cancelled.sum();
    }
}
