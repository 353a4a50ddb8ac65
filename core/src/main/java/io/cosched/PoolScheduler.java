package io.cosched;

import io.cosched.internal.PoolRuntime;

/**
 * An N-M scheduler: {@code threads} platform carriers run any number of coroutines. Unbound
 * coroutines share one FIFO queue; {@link #spawnOn} binds a coroutine to one carrier for its whole
 * life. Idle carriers park and a submission wakes exactly one of them.
 *
 * <p>With {@code useCaller(true)} only {@code threads - 1} carrier threads are created; the thread
 * that calls {@link #runOnCaller()} (or, failing that, {@link #stop}) becomes the last carrier,
 * named {@code <name>-<threads-1>} while it serves.
 *
 * <p>An interface whose one implementation {@link #builder()} makes; applications use it, they do
 * not implement it.
 *
 * <pre>{@code
 * try (PoolScheduler pool = PoolScheduler.builder().name("work").threads(4).build()) {
 *     pool.start();
 *     Coroutine<Integer> c = pool.spawn(() -> 6 * 7);
 *     int answer = c.join();
 * }
 * }</pre>
 */
public interface PoolScheduler extends Scheduler {

    static Builder builder() {
        return new Builder();
    }

    /**
     * Makes the calling thread the last carrier until the scheduler stops (another thread calls
     * {@link #stop}); it then helps drain and returns.
     *
     * @throws IllegalStateException without {@code useCaller(true)}, before {@link #start()}, or
     *                               when another thread already serves as the caller carrier
     */
    void runOnCaller();

    /**
     * Builds a {@link PoolScheduler}: {@code name} (default {@code cosched}), {@code threads},
     * {@code useCaller}, {@code daemon}, {@code requireCarrierMode}, {@code stallThreshold},
     * {@code stallWarmUpLimit}, {@code trackCoroutines}, {@code scopeHook}. Every argument is checked by {@link #build()}.
     */
    final class Builder extends SchedulerBuilder<Builder> {
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
            return new PoolRuntime(settings(Transport.AUTO, useCaller));
        }
    }
}
