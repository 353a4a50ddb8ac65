package io.cosched.internal;

import io.cosched.Parking;
import io.cosched.Timer;
import io.cosched.TimerManager;
import java.time.Duration;
import java.util.concurrent.locks.LockSupport;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;

/**
 * An idle limit ({@link Parking.IdleLimit}): the waits of one thread end when they last longer than the limit
 * without progress. The park loop ({@link Waits#park}) tells it when a wait begins and ends and asks it whether the
 * wait is over the limit and how to park.
 *
 * <p>With timers it is watched by one timer that re-arms itself for when the current wait would pass the limit (about
 * one firing per idle period, whatever the number of waits), and a wait is a plain park that the watch ends; a timed
 * park per wait would go through the JDK's unparker thread for a virtual thread. Without timers, or once they
 * refuse (the IOManager stops), each wait is a timed park.
 */
public final class IdleWatch implements Parking.IdleLimit {

    private final @Nullable TimerManager timers;
    private final long idleNanos;
    private final @Nullable LongSupplier progressProbe;
    private final LongSupplier clock; // System.nanoTime in use; the loop's clock in tests
    private final Runnable check = this::check;

    private volatile @Nullable Thread waiter; // the thread waiting with this limit, between begin and end
    private volatile boolean waiting;
    private volatile long since; // when the current wait began or last made progress; written before waiting
    private volatile int wait; // numbers the waits, so that the watch's verdict applies to the one it looked at
    private volatile int expired; // the number of the wait the watch found over the limit
    private volatile @Nullable Timer watch; // the watch's next look; null before the first wait, without timers
    private volatile boolean timersRefused; // the IOManager stopped: timed parks from now on
    private volatile boolean closed;
    private volatile long lastProgress; // what the probe said when last read

    /**
     * @param progress read at each look, when not null: a change restarts the limit (see {@link Parking#idleLimit})
     * @param clock    the time the limit is measured in: {@link System#nanoTime()}, or the loop's clock in tests
     */
    public IdleWatch(
            @Nullable TimerManager timers, long idleNanos, @Nullable LongSupplier progress, LongSupplier clock) {
        if (idleNanos <= 0) {
            throw new IllegalArgumentException("idleNanos: " + idleNanos + " (expected: > 0)");
        }
        this.timers = timers;
        this.idleNanos = idleNanos;
        this.progressProbe = progress;
        this.clock = clock;
    }

    /** In the waiting thread: a wait begins, its limit from now. */
    @SuppressWarnings("NonAtomicVolatileUpdate") // only the one waiting thread writes it
    void begin() {
        wait++;
        LongSupplier p = progressProbe;
        if (p != null) {
            lastProgress = p.getAsLong();
        }
        since = clock.getAsLong();
        waiting = true;
        waiter = Thread.currentThread();
        if (watch == null && timers != null && !timersRefused && !closed) {
            arm(idleNanos);
        }
    }

    /** In the waiting thread: the wait is over. */
    void end() {
        waiting = false;
        waiter = null;
    }

    /** In the waiting thread: whether the current wait has gone without progress for the limit. */
    boolean passed() {
        if (watch != null) {
            return expired == wait;
        }
        long now = clock.getAsLong();
        LongSupplier p = progressProbe;
        if (p != null) {
            long v = p.getAsLong();
            if (v != lastProgress) {
                lastProgress = v;
                since = now;
            }
        }
        return now - since >= idleNanos;
    }

    /** How the waiting thread parks: 0 for a plain park (the watch unparks it), else nanoseconds to the limit. */
    long parkNanos() {
        return watch != null ? 0 : Math.max(1, since + idleNanos - clock.getAsLong());
    }

    @Override
    public void progress() {
        if (waiting) {
            since = clock.getAsLong();
        }
    }

    @Override
    public void wake() {
        Thread w = waiter;
        if (w != null) {
            LockSupport.unpark(w);
        }
    }

    @Override
    public void close() {
        closed = true;
        Timer t = watch;
        if (t != null) {
            t.cancel();
            watch = null; // a wait after all (a misuse) is a timed park, not one nothing ends
        }
    }

    /** On a loop: ends a wait past the limit, else looks again when the current wait would pass it. */
    private void check() {
        if (closed) {
            return;
        }
        int seen = wait;
        long next = idleNanos;
        if (waiting) {
            long now = clock.getAsLong();
            long from = since;
            LongSupplier p = progressProbe;
            if (p != null) {
                long v = p.getAsLong();
                if (v != lastProgress) {
                    lastProgress = v; // the waiter moved: its wait starts again
                    from = now;
                    since = now;
                }
            }
            long idle = now - from;
            if (idle >= idleNanos) {
                expired = seen; // a later wait, which the next look judges, is not this one
                wake();
            } else {
                next = idleNanos - idle;
            }
        }
        arm(next);
    }

    private void arm(long nanos) {
        TimerManager t = timers;
        if (t == null || closed) {
            return;
        }
        try {
            watch = t.addTimer(Duration.ofNanos(nanos), check);
        } catch (RuntimeException stopped) {
            // the IOManager stops: a wait parked on the watch would never end; it goes on with timed parks
            timersRefused = true;
            watch = null;
            wake();
        }
    }
}
