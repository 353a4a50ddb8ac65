package io.cosched;

import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import org.jspecify.annotations.Nullable;

/**
 * A handle to one coroutine: a virtual thread started by a {@link Scheduler}.
 *
 * @param <T> the type of its result
 */
public interface Coroutine<T> {

    /** The id of its virtual thread ({@link Thread#threadId()}). */
    long id();

    /** A name for logs: the thread's name when one was set, else {@code <scheduler>-co-<id>}. */
    String name();

    /** Its state now; see {@link CoroutineState}. */
    CoroutineState state();

    /**
     * Waits for it to finish and returns its result.
     *
     * @throws ExecutionException if it failed; the cause is what it threw
     * @throws java.util.concurrent.CancellationException if it was cancelled
     * @throws InterruptedException if the waiting thread is interrupted
     */
    T join() throws InterruptedException, ExecutionException;

    /**
     * Its result as a future. The future cannot be completed from outside; cancelling it cancels
     * the coroutine. The same instance is returned every time.
     */
    CompletableFuture<T> toFuture();

    /**
     * Interrupts its thread, so a parked coroutine wakes with an {@link InterruptedException}, unless
     * it is inside a {@link Shield} ({@link Coroutines#shield}): then the actions of its open shields
     * run on the calling thread, and the thread is interrupted when the last of them closes.
     */
    void interrupt();

    /**
     * Cancels it: its result becomes a {@link java.util.concurrent.CancellationException} at once
     * and it is {@link #interrupt() interrupted}, so a parked coroutine wakes with an
     * {@link InterruptedException} (after its open shields, if any, have closed). The scheduler keeps
     * counting it as live until its code has actually returned.
     *
     * @return {@code true} if this call cancelled it, {@code false} if it had already finished
     */
    boolean cancel();

    /** Its virtual thread. */
    Thread thread();

    /**
     * Attaches what it works for, shown beside it in coroutine dumps by that object's
     * {@code toString()}, which is called only when a dump is taken (a web request's coroutine shows
     * its method, path pattern and age). Replaces an earlier attachment; null removes it.
     */
    void attach(Object what);

    /** What {@link #attach} attached, or null. */
    @Nullable
    Object attachment();

    /**
     * Its deadline: the instant, on the {@link System#nanoTime()} scale, by which the code that started it will
     * interrupt it (a web request's timeout); empty when nothing promises that. {@link TaskScope}s opened in it
     * without a timeout of their own take it as their deadline without a timer of their own: the interrupt cancels
     * them. A scope's subtasks get the scope's deadline as theirs, the earlier of its own timeout and the one it
     * inherited, so a scope opened in a subtask finds it too.
     */
    OptionalLong deadline();

    /**
     * Sets its {@link #deadline()}: a promise by whoever started it to interrupt it by {@code nanoTime}
     * ({@link System#nanoTime()} scale). Set it before its code opens task scopes, which read it as they open.
     */
    void deadline(long nanoTime);

    /** Removes its {@link #deadline()}: nothing will interrupt it by then any more (a request that began to stream). */
    void clearDeadline();

    /**
     * Wakes it from {@link Coroutines#suspend()}. A resume that arrives before the suspend is kept
     * (one at most), so the next suspend returns at once; resuming twice is the same as once.
     */
    void resume();
}
