package io.cosched.spring.boot.autoconfigure.web;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
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

    /**
     * The value of {@code counter} once it has not moved for 300 ms (a producer parked by backpressure); fails when it
     * is still moving after 30 s.
     */
    static long stableAfter(AtomicLong counter) {
        long last = -1;
        long since = System.nanoTime();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (System.nanoTime() < deadline) {
            long now = counter.get();
            if (now != last) {
                last = now;
                since = System.nanoTime();
            } else if (System.nanoTime() - since > TimeUnit.MILLISECONDS.toNanos(300)) {
                return now;
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(10));
        }
        throw new AssertionError("still moving after 30 s: " + last);
    }
}
