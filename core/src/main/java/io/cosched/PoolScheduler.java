package io.cosched;

import io.cosched.internal.PoolRuntime;

import java.time.Duration;
import java.util.concurrent.Callable;

/**
 * sylar's N-M scheduler: {@code threads} platform carriers run any number of coroutines. Unbound
 * coroutines share one FIFO queue; {@link #spawnOn} binds a coroutine to one carrier for its whole
 * life. Idle carriers park and a submission wakes exactly one of them.
 *
 * <p>With {@code useCaller(true)} only {@code threads - 1} carrier threads are created; the thread
 * that calls {@link #runOnCaller()} (or, failing that, {@link #stop}) becomes the last carrier,
 * named {@code <name>-<threads-1>} while it serves.
 *
 * <pre>{@code
 * try (PoolScheduler pool = PoolScheduler.builder().name("work").threads(4).build()) {
 *     pool.start();
 *     Coroutine<Integer> c = pool.spawn(() -> 6 * 7);
 *     int answer = c.join();
 * }
 * }</pre>
 */
public final class PoolScheduler implements Scheduler {

    private final PoolRuntime runtime;

    private PoolScheduler(Builder b) {
        this.runtime = new PoolRuntime(b.name, b.threads, b.useCaller, b.daemon, b.requireCarrierMode);
    }

    public static Builder builder() {
        return new Builder();
    }

    @Override
    public String name() {
        return runtime.name();
    }

    @Override
    public <T> Coroutine<T> spawn(Callable<T> task) {
        return runtime.spawn(task, runtime.place(), false);
    }

    @Override
    public Coroutine<Void> spawn(Runnable task) {
        return runtime.spawn(task, runtime.place(), false);
    }

    @Override
    public <T> Coroutine<T> spawnOn(int carrier, Callable<T> task) {
        return runtime.spawn(task, runtime.carrier(carrier), false);
    }

    @Override
    public void execute(Runnable task) {
        runtime.spawn(task, runtime.place(), true);
    }

    @Override
    public SchedulerStats stats() {
        return runtime.stats("pool", "none");
    }

    @Override
    public void start() {
        runtime.start();
    }

    /**
     * Makes the calling thread the last carrier until the scheduler stops (another thread calls
     * {@link #stop}); it then helps drain and returns.
     *
     * @throws IllegalStateException without {@code useCaller(true)}, before {@link #start()}, or
     *                               when another thread already serves as the caller carrier
     */
    public void runOnCaller() {
        runtime.runOnCaller();
    }

    @Override
    public boolean stop(Duration timeout) {
        return runtime.stop(timeout);
    }

    @Override
    public String toString() {
        return runtime.toString();
    }

    /** Builds a {@link PoolScheduler}; every argument is checked by {@link #build()}. */
    public static final class Builder {
        private String name = "cosched";
        private int threads = Builders.defaultThreads();
        private boolean useCaller;
        private boolean daemon;
        private boolean requireCarrierMode;

        private Builder() {
        }

        /** Scheduler name; carrier threads are named {@code <name>-<index>}. Default {@code cosched}. */
        public Builder name(String name) {
            this.name = name;
            return this;
        }

        /** Carriers, counting the caller with {@code useCaller}. Default: available processors. */
        public Builder threads(int threads) {
            this.threads = threads;
            return this;
        }

        /** Whether the thread calling {@link #runOnCaller()} or {@link #stop} serves as the last carrier. Default false. */
        public Builder useCaller(boolean useCaller) {
            this.useCaller = useCaller;
            return this;
        }

        /** Whether carrier threads are daemon threads. Default false: a running scheduler keeps the JVM alive. */
        public Builder daemon(boolean daemon) {
            this.daemon = daemon;
            return this;
        }

        /**
         * Fail {@link #build()} with {@link CarrierModeUnavailableException} instead of falling back
         * to ordinary virtual threads when the JVM lacks {@code --add-opens java.base/java.lang=ALL-UNNAMED}.
         * Default false.
         */
        public Builder requireCarrierMode(boolean require) {
            this.requireCarrierMode = require;
            return this;
        }

        public PoolScheduler build() {
            Builders.name(name);
            Builders.threads(threads);
            return new PoolScheduler(this);
        }
    }
}
