package io.cosched.internal;

import java.util.concurrent.Executor;

/**
 * Runs work that no carrier of a scheduler can take (spilled from a stalled carrier with no free
 * sibling, or left over after a stop) on the JDK's default virtual-thread scheduler.
 */
final class OrphanTarget implements RunTarget {

    private final Executor orphans;

    OrphanTarget(Executor orphans) {
        this.orphans = orphans;
    }

    @Override
    public void submitStep(CoroutineImpl<?> coroutine) {
        orphans.execute(coroutine.orphanStep());
    }

    @Override
    public void submitForeign(Runnable continuation) {
        orphans.execute(continuation);
    }

    @Override
    public void coroutineStarted() {}

    @Override
    public void coroutineFinished() {}
}
