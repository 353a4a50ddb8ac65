package io.cosched;

import java.time.Duration;

/** A timer from a {@link TimerManager}. All methods are thread-safe. */
public interface Timer {

    /**
     * Cancels the timer.
     *
     * @return {@code true} if it was pending and will now never fire; {@code false} if it had
     *         already fired (one-shot) or been cancelled
     */
    boolean cancel();

    /**
     * Restarts the timer's current delay (its period for a recurring timer) from now.
     *
     * @return {@code false} if it is no longer pending
     */
    boolean refresh();

    /**
     * Gives the timer a new delay (a new period for a recurring timer), counted from now when
     * {@code fromNow} is true, else from the time it was last armed.
     *
     * @return {@code false} if it is no longer pending
     */
    boolean reset(Duration delay, boolean fromNow);
}
