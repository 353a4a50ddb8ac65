package io.cosched;

import io.cosched.internal.CoroutineRuntime;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;

/**
 * What both public schedulers do the same way: hand each task to their runtime (the internal engine
 * that owns the carriers) as a coroutine.
 */
abstract class AbstractScheduler<R extends CoroutineRuntime> implements Scheduler {

    /** The stall threshold a builder uses unless told otherwise. */
    static final Duration DEFAULT_STALL_THRESHOLD = Duration.ofMillis(100);

    final R runtime;

    AbstractScheduler(R runtime) {
        this.runtime = runtime;
    }

    @Override
    public final String name() {
        return runtime.name();
    }

    @Override
    public final <T> Coroutine<T> spawn(Callable<T> task) {
        return runtime.spawn(task, runtime.place(), false);
    }

    @Override
    public final Coroutine<Void> spawn(Runnable task) {
        return runtime.spawn(task, runtime.place(), false);
    }

    @Override
    public final <T> Coroutine<T> spawnOn(int carrier, Callable<T> task) {
        return runtime.spawn(task, runtime.carrier(carrier), false);
    }

    @Override
    public final void execute(Runnable task) {
        runtime.spawn(task, runtime.place(), true);
    }

    @Override
    public final boolean isCurrent() {
        return runtime.isCurrent();
    }

    @Override
    public final SchedulerStats stats() {
        return runtime.stats();
    }

    @Override
    public final List<CarrierStats> carrierStats() {
        return runtime.carrierStats();
    }

    @Override
    public final List<Coroutine<?>> coroutines() {
        return runtime.coroutines();
    }

    @Override
    public final String toString() {
        return runtime.toString();
    }

    /** The builder settings both schedulers share; each argument is checked by {@code build()}. */
    abstract static class Builder<B extends Builder<B>> {
        String name;
        int threads = Runtime.getRuntime().availableProcessors();
        boolean daemon;
        boolean requireCarrierMode;
        Duration stallThreshold = DEFAULT_STALL_THRESHOLD;
        boolean trackCoroutines;

        Builder(String defaultName) {
            this.name = defaultName;
        }

        abstract B self();

        /** Scheduler name; carrier threads are named {@code <name>-<index>}. */
        public B name(String name) {
            this.name = name;
            return self();
        }

        /** Carriers (event loops for an IOManager). Default: available processors. */
        public B threads(int threads) {
            this.threads = threads;
            return self();
        }

        /** Whether carrier threads are daemon threads. Default false: a running scheduler keeps the JVM alive. */
        public B daemon(boolean daemon) {
            this.daemon = daemon;
            return self();
        }

        /**
         * Fail {@code build()} with {@link CarrierModeUnavailableException} instead of falling back
         * to ordinary virtual threads when the JVM lacks {@code --add-opens java.base/java.lang=ALL-UNNAMED}.
         * Default false.
         */
        public B requireCarrierMode(boolean require) {
            this.requireCarrierMode = require;
            return self();
        }

        /**
         * How long a carrier may stay inside one task before the stall watchdog logs it (WARN, with
         * the stack), counts it in {@link SchedulerStats#stalls()}, and moves its work elsewhere until
         * it moves again: queued continuations spill to other carriers, an event loop's due timers fire
         * on another loop, and new channels skip a loop in one task for a tenth of it. A carrier that
         * got no CPU meanwhile counts in {@link SchedulerStats#starvations()} instead. Default 100 ms;
         * {@link Duration#ZERO} turns the watchdog off.
         */
        public B stallThreshold(Duration threshold) {
            this.stallThreshold = threshold;
            return self();
        }

        /**
         * Keep a set of live coroutines, so that {@link Scheduler#coroutines()} can list them for a
         * dump. Costs a concurrent-set insert and removal per coroutine. Default false.
         */
        public B trackCoroutines(boolean track) {
            this.trackCoroutines = track;
            return self();
        }

        long stallThresholdNanos() {
            return io.cosched.internal.Durations.toNanos("stallThreshold", stallThreshold, false);
        }

        /** Checks the shared arguments by the rules of {@link Arguments}. */
        void check() {
            Arguments.nonBlank("name", name);
            Arguments.positive("threads", threads);
            Arguments.nonNegative("stallThreshold", stallThreshold);
        }
    }
}
