package io.cosched;

import io.cosched.internal.Carrier;
import io.cosched.internal.ComputePool;
import io.cosched.internal.CoroutineImpl;
import io.cosched.internal.Waits;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;

/**
 * Helpers for code running inside a coroutine. Called from a plain thread they still work, by
 * blocking that thread.
 */
public final class Coroutines {

    private Coroutines() {}

    /** The coroutine the caller runs in, if any. */
    public static Optional<Coroutine<?>> current() {
        return Optional.ofNullable(CoroutineImpl.current());
    }

    /**
     * Sleeps. A coroutine of an {@link IOManager} parks on a timer of its own event loop and is
     * counted as {@link CoroutineState#SLEEPING}; elsewhere this is {@link Thread#sleep}.
     *
     * @throws InterruptedException if interrupted (e.g. {@link Coroutine#cancel()}) while sleeping
     */
    public static void sleep(Duration duration) throws InterruptedException {
        long nanos = io.cosched.internal.Durations.toNanos("duration", duration, false);
        Waits.sleep(nanos);
    }

    /** Lets other coroutines of the same carrier run; the caller goes to the back of its carrier's queue. */
    public static void yieldNow() {
        Thread.yield();
    }

    /**
     * Parks until {@code stage} completes and returns its value. On a loop, the coroutine resumes
     * on the same loop it parked on.
     *
     * @throws CompletionException if the stage failed; the cause is its failure
     * @throws CancellationException if the stage was cancelled
     * @throws InterruptedException if interrupted while waiting
     */
    public static <T> T await(CompletionStage<T> stage) throws InterruptedException {
        return Waits.await(stage, -1, null);
    }

    /**
     * {@link #await(CompletionStage)} with a time limit.
     *
     * @throws AwaitTimeoutException when {@code timeout} passes first; the stage is not cancelled
     */
    public static <T> T await(CompletionStage<T> stage, Duration timeout) throws InterruptedException {
        long nanos = io.cosched.internal.Durations.toNanos("timeout", timeout, false);
        return Waits.await(stage, nanos, timeout);
    }

    /**
     * Runs CPU-heavy {@code work} on cosched's compute pool (one platform thread per core) and parks
     * the caller until it is done, so an event loop is not held by it. Interrupting the caller
     * cancels the work.
     *
     * @throws CompletionException if {@code work} threw; the cause is what it threw
     */
    public static <T> T compute(Callable<T> work) throws InterruptedException {
        return ComputePool.compute(work);
    }

    /**
     * The compute pool {@link #compute} uses, as an {@link Executor}: for code that hands CPU-heavy
     * work over and carries on where it ran, such as a Reactor scheduler
     * ({@code Schedulers.fromExecutor(Coroutines.computePool())}). Tasks run on platform threads
     * named {@code cosched-compute-<n>}, one per core, in the order given.
     */
    public static Executor computePool() {
        return ComputePool.executor();
    }

    /**
     * Starts {@code task} as a coroutine. Inside a coroutine, or on a carrier
     * thread, it goes to the same scheduler and, for an IOManager, the same loop. Elsewhere it goes
     * to the first {@link IOManager} started and still running, else to a shared daemon IOManager
     * named {@code cosched-go}, created on first use ({@link IOManager#defaultInstance()}).
     */
    public static Coroutine<Void> go(Runnable task) {
        CoroutineImpl<?> ctx = CoroutineImpl.currentContext();
        if (ctx != null) {
            return ctx.scheduler().spawnLocal(task);
        }
        Carrier carrier = Carrier.ofCurrentThread();
        if (carrier != null) {
            return carrier.owner().spawnLocal(task);
        }
        return IOManager.defaultInstance().spawn(task);
    }

    /**
     * Opens a {@link Shield} for the calling coroutine: until it is closed, {@link Coroutine#interrupt()}
     * and {@link Coroutine#cancel()} run {@code onInterrupt} instead of interrupting the thread, and the
     * interrupt arrives when the coroutine's last shield closes. {@code onInterrupt} runs on the
     * interrupting thread, once per shield, and must not block (an event loop may be the caller); when
     * an interrupt is already pending as the shield opens, it runs at once. Outside a coroutine there
     * is nothing to shield from, and the shield does nothing.
     */
    public static Shield shield(Runnable onInterrupt) {
        if (onInterrupt == null) {
            throw new NullPointerException("onInterrupt: null (expected: an action, () -> {} for none)");
        }
        CoroutineImpl<?> co = CoroutineImpl.current();
        return co == null ? CoroutineImpl.NO_SHIELD : co.openShield(onInterrupt);
    }

    /**
     * Parks the calling coroutine until someone calls its {@link Coroutine#resume()}. A resume that came
     * first is not lost; spurious
     * wake-ups never make this return early.
     *
     * @throws IllegalStateException when called outside a coroutine
     * @throws InterruptedException if interrupted (e.g. cancelled) while suspended
     */
    public static void suspend() throws InterruptedException {
        CoroutineImpl<?> co = CoroutineImpl.current();
        if (co == null) {
            throw new IllegalStateException("suspend() called outside a coroutine (on " + Thread.currentThread() + ")");
        }
        co.suspendSelf();
    }
}
