package io.cosched.internal;

import java.util.concurrent.RejectedExecutionException;
import org.jspecify.annotations.Nullable;

/**
 * The time limit of one blocking wait. A coroutine homed on an IOManager loop is woken at the deadline
 * by a timer of that loop, so the loop's own thread resumes it; the JDK would otherwise schedule the
 * wake-up of a timed park on one of its unparker threads and hop back. Any other thread parks with
 * a timeout.
 *
 * <p>Use: hand it to {@link Waits#park}, which parks as {@link #parkNanos()} says until {@link #passed()}, and
 * {@link #cancel()} it in a {@code finally}.
 */
public final class Deadline {

    private final long at; // System.nanoTime() at the deadline
    private final @Nullable TimerImpl timer; // the loop's wake-up timer, or null

    private Deadline(long at, @Nullable TimerImpl timer) {
        this.at = at;
        this.timer = timer;
    }

    /** A deadline {@code nanos} from now for the calling thread ({@code nanos <= 0}: passed already). */
    public static Deadline after(long nanos) {
        return after(nanos, nanos <= 0 ? null : CoroutineImpl.current());
    }

    /** {@link #after(long)} for a caller that has looked up its coroutine ({@code null}: none) already. */
    static Deadline after(long nanos, @Nullable CoroutineImpl<?> co) {
        long at = System.nanoTime() + Math.max(0, nanos);
        return new Deadline(at, nanos <= 0 || co == null ? null : loopWakeUp(co, nanos));
    }

    /** A wake-up timer on the coroutine's home loop, or {@code null} when it has none or it stopped. */
    private static @Nullable TimerImpl loopWakeUp(CoroutineImpl<?> co, long nanos) {
        if (co.scheduler instanceof IORuntime io
                && co.home instanceof LoopCarrier loop
                && io.lifecycle() < CoroutineRuntime.STOPPED) {
            try {
                return io.timers().wakeUp(loop, nanos, Thread.currentThread());
            } catch (RejectedExecutionException stopped) {
                return null;
            }
        }
        return null;
    }

    /** Whether the deadline has passed. */
    public boolean passed() {
        return timer != null ? timer.hasFired() : System.nanoTime() - at >= 0;
    }

    /** Nanoseconds left, 0 once passed. */
    public long remainingNanos() {
        return passed() ? 0 : Math.max(1, at - System.nanoTime());
    }

    /**
     * How the thread that made it parks until the deadline: 0 for a plain park, which the loop's timer ends at the deadline,
     * else the nanoseconds left for a timed park (at least 1: the caller looked at {@link #passed()} just before).
     */
    long parkNanos() {
        return timer != null ? 0 : Math.max(1, at - System.nanoTime());
    }

    /** Gives the loop's timer back when the wait ended before the deadline. */
    public void cancel() {
        if (timer != null) {
            timer.cancel();
        }
    }
}
