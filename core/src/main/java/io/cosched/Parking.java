package io.cosched;

import io.cosched.internal.IdleWatch;
import io.cosched.internal.Waits;
import java.time.Duration;
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;

/**
 * The park loop of cosched's waits ({@code io.cosched.internal.Waits.park}) for cosched's other modules, which do
 * not see {@code io.cosched.internal} on the module path: park the calling thread until a condition holds, the
 * thread is interrupted, or an idle limit passes. A coroutine parks and
 * frees its carrier, and counts as waiting in the fallback-mode stats while it does; a platform thread blocks.
 *
 * <p>The condition is evaluated in the parked thread before each park: it should be cheap and allocate nothing
 * (a field holding a method reference, not a lambda made per wait), and whoever makes it true unparks the thread
 * ({@link java.util.concurrent.locks.LockSupport#unpark}, or {@link IdleLimit#wake()}). A wake-up that finds it false
 * is spurious and parked over.
 */
@Internal
public final class Parking {

    private Parking() {}

    /** Why a park returned. */
    public enum Outcome {
        /** The condition holds. */
        READY,
        /**
         * The thread was interrupted first; its interrupt status is cleared, as when {@link InterruptedException} is
         * thrown: the caller throws, or sets it again.
         */
        INTERRUPTED,
        /** The wait's deadline passed first (core's own waits). */
        DEADLINE_PASSED,
        /** The idle limit passed first: no progress for that long. */
        IDLE_PASSED
    }

    /**
     * A limit on how long a wait may last without progress: counted from the start of each wait, restarted by
     * {@link #progress()}. For one waiting thread at a time (a stream's reader, say), for as many waits as it makes.
     * With a {@link TimerManager} the limit is watched by one loop timer that re-arms itself about once per idle
     * period, instead of a timed park per wait (a virtual thread's timed park is woken by the JDK's unparker thread: a
     * thread hop per wait); without, each wait is a timed park.
     */
    public sealed interface IdleLimit permits IdleWatch {

        /** The waiter made progress: the current wait's limit restarts from now. Any thread. */
        void progress();

        /** Unparks the thread waiting with this limit, if any: for whoever made its condition true. Any thread. */
        void wake();

        /** No more waits: the watch's timer stops. */
        void close();
    }

    /**
     * An idle limit of {@code limit}, watched on {@code timers} (an IOManager's timers; the watch lands on the loop
     * of the coroutine that first waits), or by timed parks when {@code timers} is null.
     *
     * @param progress read by the watch at each look, when not null: a change counts as progress (the bytes a
     *                 connection has still to write, which a slow but steady client takes down a little at a time)
     */
    public static IdleLimit idleLimit(@Nullable TimerManager timers, Duration limit, @Nullable LongSupplier progress) {
        return new IdleWatch(timers, Arguments.positive("limit", limit).toNanos(), progress, System::nanoTime);
    }

    /**
     * Parks until {@code ready} holds ({@link Outcome#READY}), the thread is interrupted ({@link Outcome#INTERRUPTED},
     * the interrupt status cleared) or {@code idle} passes ({@link Outcome#IDLE_PASSED}; a null limit never does).
     */
    public static Outcome park(BooleanSupplier ready, @Nullable IdleLimit idle, Object blocker) {
        return Waits.park(ready, null, (IdleWatch) idle, false, blocker);
    }
}
