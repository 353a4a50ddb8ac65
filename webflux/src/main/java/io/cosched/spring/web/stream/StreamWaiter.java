package io.cosched.spring.web.stream;

import io.cosched.Timer;
import io.cosched.TimerManager;
import java.time.Duration;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;

/**
 * The one thread that waits on a stream for its client (a reader for bytes, a producer for demand), and the
 * stream's read or write timeout: a wait that lasts longer than the timeout given (the read or the write timeout of
 * {@link StreamRequest#limits()}) without the client moving ends. The limit is watched by one loop timer per stream that re-arms itself (about one firing per idle period),
 * not by a timed park per wait: a virtual thread's timed park goes through the JDK's unparker thread, a thread hop
 * for every wait (measured: a quarter more CPU per megabyte read). The client moves when it is woken for (bytes
 * or demand came), and, for a writer, when {@code progress} (the connection's bytes still to be written) changes:
 * a client that reads slowly but steadily empties the socket a little at a time, long before the next demand.
 *
 * <p>Without a timer manager (a detached stream) each wait is a timed park instead.
 */
final class StreamWaiter {

    private final StreamRequest request;
    private final @Nullable LongSupplier progress;
    private final long idleNanos;

    private volatile @Nullable Thread waiter;
    private volatile long waitingSince; // when the current wait began or the client last moved; 0: not waiting
    private volatile int wait; // counts the waits, so that a watch's verdict applies to the one it saw
    private volatile boolean idlePassed; // the watch found the current wait over the limit
    private volatile @Nullable Timer watch; // the watch's next check; null before the first wait
    private volatile boolean closed;
    private volatile long lastProgress; // the connection's bytes still to write, when last looked at

    StreamWaiter(StreamRequest request, long idleNanos, @Nullable LongSupplier progress) {
        this.request = request;
        this.progress = progress;
        this.idleNanos = idleNanos;
    }

    /** A wait for the client begins. */
    void begin() {
        idlePassed = false;
        wait++; // the waiting thread's only writer
        LongSupplier p = progress;
        if (p != null) {
            lastProgress = p.getAsLong();
        }
        waitingSince = System.nanoTime();
        if (idleNanos > 0 && watch == null && !closed) {
            TimerManager timers = request.timers();
            if (timers != null) {
                watch = timers.addTimer(Duration.ofNanos(idleNanos), this::check);
            }
        }
    }

    /** The wait is over. */
    void end() {
        waitingSince = 0;
    }

    /**
     * Parks the waiting thread until {@link #wake()}, unless {@code stillWaiting} turned false once it is the
     * waiter (so that a wake-up in between is not lost). False when the timeout has passed.
     */
    boolean park(Object blocker, BooleanSupplier stillWaiting) {
        waiter = Thread.currentThread();
        try {
            if (!stillWaiting.getAsBoolean()) {
                return true;
            }
            if (idleNanos == 0) {
                LockSupport.park(blocker);
                return true;
            }
            if (watch != null) {
                LockSupport.park(blocker);
                return !idlePassed;
            }
            long left = waitingSince + idleNanos - System.nanoTime(); // no timers: a timed park
            if (left <= 0) {
                return false;
            }
            LockSupport.parkNanos(blocker, left);
            return true;
        } finally {
            waiter = null;
        }
    }

    /** Parks as {@link #park} does, without the timeout: for a wait that is not the client's. */
    void parkUntimed(Object blocker, BooleanSupplier stillWaiting) {
        waiter = Thread.currentThread();
        try {
            if (stillWaiting.getAsBoolean()) {
                LockSupport.park(blocker);
            }
        } finally {
            waiter = null;
        }
    }

    void wake() {
        Thread w = waiter;
        if (w != null) {
            LockSupport.unpark(w);
        }
    }

    /** No more waits: the watch stops. */
    void close() {
        closed = true;
        Timer t = watch;
        if (t != null) {
            t.cancel();
        }
    }

    /** On a loop: ends a wait past the limit, else looks again when the current wait would pass it. */
    private void check() {
        if (closed) {
            return;
        }
        int seen = wait;
        long now = System.nanoTime();
        long since = waitingSince;
        long next = idleNanos;
        if (since != 0) {
            LongSupplier p = progress;
            if (p != null) {
                long pending = p.getAsLong();
                if (pending != lastProgress) {
                    lastProgress = pending; // the client took some: its wait starts again
                    since = now;
                    if (wait == seen) {
                        waitingSince = now;
                    }
                }
            }
            long waited = now - since;
            if (waited >= idleNanos) {
                if (wait == seen) { // not a later wait, which the next look judges
                    idlePassed = true;
                    wake();
                }
            } else {
                next = idleNanos - waited;
            }
        }
        TimerManager timers = request.timers();
        if (timers != null && !closed) {
            try {
                watch = timers.addTimer(Duration.ofNanos(next), this::check);
            } catch (RuntimeException stopping) {
                // the IOManager stops: the request ends with it
            }
        }
    }
}
