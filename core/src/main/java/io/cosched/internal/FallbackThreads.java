package io.cosched.internal;

import java.util.concurrent.Executor;
import org.jspecify.annotations.Nullable;

/** Fallback mode: coroutines are ordinary virtual threads on the JDK's default scheduler. */
final class FallbackThreads extends CoroutineThreads {

    FallbackThreads(String reason) {
        super(reason);
    }

    @Override
    public Thread newThread(Executor scheduler, Runnable body) {
        return Thread.ofVirtual().unstarted(body);
    }

    @Override
    public @Nullable Executor currentScheduler() {
        return null;
    }

    @Override
    public Executor orphanExecutor() {
        // Nothing is ever orphaned: no continuation runs on a cosched carrier in this mode.
        return Runnable::run;
    }
}
