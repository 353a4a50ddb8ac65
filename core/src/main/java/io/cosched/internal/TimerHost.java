package io.cosched.internal;

/** What a {@link TimerImpl} reports to: the loop that owns its {@link TimerQueue}. */
interface TimerHost {

    long nanoTime();

    /** The timer went from pending to cancelled. */
    void cancelled(TimerImpl timer);

    /** The timer's deadline changed while it stayed pending. */
    void moved(TimerImpl timer);
}
