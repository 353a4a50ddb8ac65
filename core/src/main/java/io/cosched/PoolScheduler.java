package io.cosched;

import io.cosched.internal.PoolRuntime;

import java.time.Duration;

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
public final class PoolScheduler extends AbstractScheduler<PoolRuntime> {

    private PoolScheduler(PoolRuntime runtime) {
        super(runtime);
    }

    public static Builder builder() {
        return new Builder();
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

    /**
     * Builds a {@link PoolScheduler}: {@code name} (default {@code cosched}), {@code threads},
     * {@code useCaller}, {@code daemon}, {@code requireCarrierMode}, {@code stallThreshold},
     * {@code trackCoroutines}. Every argument is checked by {@link #build()}.
     */
    public static final class Builder extends AbstractScheduler.Builder<Builder> {
        private boolean useCaller;

        private Builder() {
            super("cosched");
        }

        @Override
        Builder self() {
            return this;
        }

        /** Whether the thread calling {@link #runOnCaller()} or {@link #stop} serves as the last carrier. Default false. */
        public Builder useCaller(boolean useCaller) {
            this.useCaller = useCaller;
            return this;
        }

        /** @throws CarrierModeUnavailableException if carrier mode is required and unavailable */
        public PoolScheduler build() {
            check();
            return new PoolScheduler(new PoolRuntime(name, threads, useCaller, daemon, requireCarrierMode,
                    stallThresholdNanos(), trackCoroutines));
        }
    }
}
