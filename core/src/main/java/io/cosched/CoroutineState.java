package io.cosched;

/** Where a coroutine is in its life: ready, running, sleeping or waiting, and how it ended. */
public enum CoroutineState {
    /** Queued for a carrier: spawned and not yet started, or resumed and not yet running again. */
    READY,
    /** Mounted on a carrier and executing. */
    RUNNING,
    /** Parked: on I/O, a lock, a queue, {@link Coroutines#await}, {@link Coroutines#suspend} and the like. */
    WAITING,
    /** Parked in {@link Coroutines#sleep}. */
    SLEEPING,
    /** Finished normally. */
    DONE,
    /** Finished by throwing. */
    FAILED,
    /** Cancelled through {@link Coroutine#cancel()}. */
    CANCELLED;

    /** Whether this state is final. */
    public boolean isTerminal() {
        return this == DONE || this == FAILED || this == CANCELLED;
    }
}
