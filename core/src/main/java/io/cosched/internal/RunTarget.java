package io.cosched.internal;

/**
 * Where a coroutine's steps run: one carrier (an event loop, a bound pool carrier) or a pool's
 * shared queue. Submission never blocks: the JDK calls it with the continuation pinned.
 */
interface RunTarget {

    /** The coroutine's continuation is runnable: queue a step of it. */
    void submitStep(CoroutineImpl<?> coroutine);

    /**
     * A continuation of a thread that inherited a coroutine's scheduler (a virtual thread started
     * inside a coroutine gets the same scheduler from the JDK, so its steps come here too): queue it as is.
     */
    void submitForeign(Runnable continuation);

    /** A coroutine homed here was started. */
    void coroutineStarted();

    /** A coroutine homed here finished. */
    void coroutineFinished();
}
