package io.cosched;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;

/**
 * Runs coroutines (virtual threads) on a set of carrier threads.
 *
 * <p>Every task becomes its own coroutine: nothing is pooled except the carriers. A task that
 * blocks in a JDK call (socket I/O, {@code Thread.sleep}, locks, queues) parks its coroutine and
 * frees the carrier for the next one.
 */
public interface Scheduler extends Executor, AutoCloseable {

    /** How long {@link #close()} waits for coroutines to finish. */
    Duration DEFAULT_STOP_TIMEOUT = Duration.ofSeconds(30);

    /** The name given to the builder; carrier threads are named {@code <name>-<index>}. */
    String name();

    /** Carriers (event loops for an {@link IOManager}), fixed at build time. */
    int threads();

    /**
     * Whether coroutines run on this scheduler's carriers ({@link SchedulerStats.Mode#CARRIER});
     * {@code false} in fallback mode, where they are ordinary virtual threads.
     */
    boolean isCarrierMode();

    /** Where the scheduler is in its life, as {@link SchedulerStats#state()} reports it, without a snapshot. */
    SchedulerStats.State state();

    /**
     * Starts {@code task} as a new coroutine.
     *
     * @throws RejectedExecutionException if the scheduler is not running
     */
    <T> Coroutine<T> spawn(Callable<T> task);

    /**
     * Starts {@code task} as a new coroutine.
     *
     * @throws RejectedExecutionException if the scheduler is not running
     */
    Coroutine<Void> spawn(Runnable task);

    /**
     * Starts {@code task} as a coroutine bound to one carrier: every step of it runs on carrier
     * {@code carrier} (0-based, below {@link #threads()}).
     *
     * @throws IllegalArgumentException if {@code carrier} is out of range
     * @throws RejectedExecutionException if the scheduler is not running
     */
    <T> Coroutine<T> spawnOn(int index, Callable<T> task);

    /**
     * Runs {@code task} as a new coroutine. An exception it throws goes to the coroutine thread's
     * uncaught-exception handler, as with any {@link Executor}.
     *
     * @throws RejectedExecutionException if the scheduler is not running
     */
    @Override
    void execute(Runnable task);

    /**
     * Whether the calling code runs on this scheduler: in one of its coroutines (or a virtual thread
     * that one of them started), or on one of its carrier threads.
     */
    boolean isCurrent();

    /** A snapshot of the scheduler's numbers: exact when it is quiet, cheap to read while it is busy. */
    SchedulerStats stats();

    /** One snapshot per carrier, in index order: its state, queue depth and coroutines. */
    List<CarrierStats> carrierStats();

    /**
     * The coroutines started and not yet finished, for a dump of their stacks
     * ({@link Coroutine#thread()}{@code .getStackTrace()}).
     *
     * @throws IllegalStateException unless the scheduler was built with {@code trackCoroutines(true)}
     */
    List<Coroutine<?>> coroutines();

    /** Starts the carriers. Calling it on a running scheduler does nothing. */
    void start();

    /**
     * Stops accepting new coroutines and waits up to {@code timeout} for the live ones to finish.
     * Continuations that arrive after the carriers have stopped run on the JDK's default
     * virtual-thread scheduler, so no coroutine is ever stranded.
     *
     * Stopping a stopped scheduler returns at once.
     *
     * @return {@code true} when every coroutine finished within the timeout
     * @throws IllegalStateException when called from one of this scheduler's own carriers or coroutines
     */
    boolean stop(Duration timeout);

    /** {@link #stop(Duration) stop} with {@link #DEFAULT_STOP_TIMEOUT}. */
    @Override
    default void close() {
        stop(DEFAULT_STOP_TIMEOUT);
    }
}
