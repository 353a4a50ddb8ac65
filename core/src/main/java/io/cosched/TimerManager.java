package io.cosched;

import java.time.Duration;
import java.util.concurrent.RejectedExecutionException;

/**
 * Timers on an {@link IOManager}'s event loops. Timer tasks run on
 * the loop thread itself, not as coroutines: keep them short, and start a coroutine
 * ({@link Coroutines#go}) from the task for anything that blocks.
 *
 * <p>A timer added from a loop thread or from a coroutine on a loop lives on that loop; one added
 * from any other thread goes to the loops in turn. Adding to a stopped IOManager throws
 * {@link RejectedExecutionException}.
 */
public interface TimerManager {

    /** Runs {@code task} once after {@code delay} (zero or positive). */
    Timer addTimer(Duration delay, Runnable task);

    /**
     * Runs {@code task} every {@code period} (positive) until the timer is cancelled. The next run
     * is due one period after the previous one was due; runs missed while the loop was busy are
     * skipped, not bunched up.
     */
    Timer addRecurringTimer(Duration period, Runnable task);

    /**
     * Runs {@code task} once after {@code delay}, but only if {@code condition} is still strongly
     * reachable then: the timer holds it weakly, so a condition that was garbage-collected turns
     * the timer into a no-op.
     */
    Timer addConditionTimer(Duration delay, Runnable task, Object condition);

    /** Timers that are still going to fire: added, not yet fired (one-shot) and not cancelled. */
    int pending();
}
