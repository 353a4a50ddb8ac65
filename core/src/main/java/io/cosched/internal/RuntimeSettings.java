package io.cosched.internal;

import io.cosched.ScopeHook;
import io.cosched.Transport;

/**
 * Everything a runtime is built from, checked by the public builders before it gets here.
 *
 * @param name                scheduler name; carrier threads are {@code <name>-<index>}
 * @param threads             carriers (event loops for an IOManager)
 * @param daemon              whether carrier threads are daemon threads
 * @param requireCarrierMode  fail instead of falling back to the JDK's virtual-thread scheduler
 * @param stallThresholdNanos how long a carrier may stay in one task before the watchdog reports it
 *                            and spills its work; 0 turns the watchdog off
 * @param trackCoroutines     keep a set of live coroutines for a dump
 * @param transport           an IOManager's transport ({@code AUTO} picks); ignored by a pool
 * @param useCaller           a pool's last carrier is the thread calling {@code runOnCaller()}; ignored by an IOManager
 * @param scopeHook           what task scopes opened on its coroutines add (a default deadline, context)
 * @param stallWarmUpLimitNanos the longest a stall loading classes or with the JIT compiling counts as warm-up
 */
public record RuntimeSettings(
        String name,
        int threads,
        boolean daemon,
        boolean requireCarrierMode,
        long stallThresholdNanos,
        boolean trackCoroutines,
        Transport transport,
        boolean useCaller,
        ScopeHook scopeHook,
        long stallWarmUpLimitNanos) {

    /** {@code threads} carriers named after {@code name}, watchdog off, nothing else asked for: for tests. */
    static RuntimeSettings of(String name, int threads) {
        return new RuntimeSettings(name, threads, true, false, 0, false, Transport.AUTO, false, ScopeHook.NONE, 0);
    }

    RuntimeSettings withStallThresholdNanos(long nanos) {
        return new RuntimeSettings(
                name,
                threads,
                daemon,
                requireCarrierMode,
                nanos,
                trackCoroutines,
                transport,
                useCaller,
                scopeHook,
                stallWarmUpLimitNanos);
    }
}
