package io.cosched.spring.boot.autoconfigure.web;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Supplier;

/**
 * Waits for a state of the running app (a counter reached a value, a carrier recovered), checking
 * every few milliseconds and failing after 10 s with a description of what was seen last. For
 * states, not for outcomes a future or latch can await.
 */
final class Await {

    private static final long TIMEOUT_NANOS = TimeUnit.SECONDS.toNanos(10);

    private Await() {}

    /** A condition that may throw (an HTTP call, say). */
    @FunctionalInterface
    interface Condition {
        boolean met() throws Exception;
    }

    static void until(Condition condition, Supplier<String> describe) throws Exception {
        long deadline = System.nanoTime() + TIMEOUT_NANOS;
        while (!condition.met()) {
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError("not reached within 10 s: " + describe.get());
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
        }
    }
}
