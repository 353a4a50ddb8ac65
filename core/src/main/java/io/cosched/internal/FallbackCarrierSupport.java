package io.cosched.internal;

import java.util.concurrent.Executor;

/** Fallback mode: coroutines are ordinary virtual threads on the JDK's default scheduler. */
final class FallbackCarrierSupport extends CarrierSupport {

    private final String reason;

    FallbackCarrierSupport(String reason) {
        this.reason = reason;
    }

    @Override
    public boolean isCarrierMode() {
        return false;
    }

    @Override
    public String unavailableReason() {
        return reason;
    }

    @Override
    public Thread newThread(Executor scheduler, Runnable body) {
        return Thread.ofVirtual().unstarted(body);
    }

    @Override
    public Executor currentScheduler() {
        return null;
    }

    @Override
    public Executor orphanExecutor() {
        // Nothing is ever orphaned: no continuation runs on a cosched carrier in this mode.
        return Runnable::run;
    }
}
