package io.cosched.spring.web.stream;

import io.cosched.Parking;
import java.time.Duration;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;

/**
 * The one thread that waits on a stream for its client (a reader for bytes, a producer for demand), parked by core's
 * park loop ({@link Parking}) with the stream's read or write timeout as its idle limit: a wait that lasts longer
 * than the timeout without the client moving ends. The limit is watched by one loop timer per stream (the request's
 * loop's), not a timed park per wait; without timers (a detached stream) each wait is a timed park. The client moves
 * when the wait's condition comes true (bytes or demand came) and, for a writer, when {@code progress} (the
 * connection's bytes still to be written) changes: a client that reads slowly but steadily empties the socket a
 * little at a time, long before the next demand.
 */
final class StreamWaiter {

    private final Parking.@Nullable IdleLimit idle; // null: no timeout
    private volatile @Nullable Thread waiter; // the parked thread, for a wake without an idle limit

    StreamWaiter(StreamRequest request, long idleNanos, @Nullable LongSupplier progress) {
        this.idle = idleNanos > 0 ? Parking.idleLimit(request.timers(), Duration.ofNanos(idleNanos), progress) : null;
    }

    /**
     * Parks the waiting thread until {@code ready} holds or the timeout passes (false). An interrupt ends the park
     * with the thread's interrupt status set again, for the caller's loop to act on.
     */
    boolean park(Object blocker, BooleanSupplier ready) {
        return park(blocker, ready, idle);
    }

    /** Parks as {@link #park} does, without the timeout: for a wait that is not the client's. */
    void parkUntimed(Object blocker, BooleanSupplier ready) {
        park(blocker, ready, null);
    }

    private boolean park(Object blocker, BooleanSupplier ready, Parking.@Nullable IdleLimit limit) {
        waiter = Thread.currentThread(); // before the park loop's first look at the condition: no wake is lost
        try {
            Parking.Outcome outcome = Parking.park(ready, limit, blocker);
            if (outcome == Parking.Outcome.INTERRUPTED) {
                Thread.currentThread().interrupt();
            }
            return outcome != Parking.Outcome.IDLE_PASSED;
        } finally {
            waiter = null;
        }
    }

    /** Wakes the waiting thread, if one waits: its condition may hold now. */
    void wake() {
        Thread w = waiter;
        if (w != null) {
            LockSupport.unpark(w);
        }
    }

    /** No more waits: the timeout's watch stops. */
    void close() {
        Parking.IdleLimit limit = idle;
        if (limit != null) {
            limit.close();
        }
    }
}
