package io.cosched.internal;

import java.util.concurrent.Callable;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.FutureTask;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * The compute pool: platform threads, one per core, named {@code cosched-compute-<n>},
 * for CPU-heavy work that would otherwise hold an event loop. Created on first use; daemon.
 */
public final class ComputePool {

    private static final class Holder {
        static final ExecutorService POOL = create();

        private static ExecutorService create() {
            int threads = Runtime.getRuntime().availableProcessors();
            AtomicInteger n = new AtomicInteger();
            ThreadPoolExecutor pool = new ThreadPoolExecutor(
                    threads,
                    threads,
                    60,
                    TimeUnit.SECONDS,
                    new LinkedBlockingQueue<>(),
                    r -> new Worker(r, "cosched-compute-" + n.getAndIncrement()));
            pool.allowCoreThreadTimeOut(true);
            return pool;
        }
    }

    private ComputePool() {}

    /**
     * A thread of the pool. While it runs a task scope's subtask it holds the subtask's deadline, which a scope opened
     * there finds as a coroutine's subtask finds its coroutine's ({@link CoroutineImpl#deadlineNanos()}): a field of
     * the thread, no ThreadLocal, set and cleared by the subtask itself.
     */
    static final class Worker extends Thread {
        long forkDeadline = CoroutineImpl.NO_DEADLINE; // this thread's own

        Worker(Runnable task, String name) {
            super(task, name);
            setDaemon(true);
        }
    }

    /** The deadline of the subtask the calling compute thread runs, {@link CoroutineImpl#NO_DEADLINE} elsewhere. */
    static long currentForkDeadline() {
        return Thread.currentThread() instanceof Worker w ? w.forkDeadline : CoroutineImpl.NO_DEADLINE;
    }

    /** The pool itself, for code that hands CPU work over and continues there (a Reactor scheduler). */
    public static Executor executor() {
        return Holder.POOL;
    }

    /** Runs {@code work} on the compute pool and parks the caller until it is done. */
    public static <T> T compute(Callable<T> work) throws InterruptedException {
        if (work == null) {
            throw new NullPointerException("work: null (expected: a Callable to run)");
        }
        Task<T> task = new Task<>(work, Thread.currentThread());
        Holder.POOL.execute(task);
        Waits.parkUntil(task::isDone, task, () -> task.cancel(true)); // the task is ours to cancel
        try {
            return task.get();
        } catch (ExecutionException e) {
            throw new CompletionException(e.getCause());
        }
    }

    private static final class Task<T> extends FutureTask<T> {
        private final Thread waiter;

        Task(Callable<T> work, Thread waiter) {
            super(work);
            this.waiter = waiter;
        }

        @Override
        protected void done() {
            LockSupport.unpark(waiter);
        }
    }
}
