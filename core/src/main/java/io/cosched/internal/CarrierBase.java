package io.cosched.internal;

import io.netty.util.concurrent.FastThreadLocalThread;

/**
 * A carrier: one platform thread that runs coroutine steps. It records what it runs, so stats can
 * count running coroutines and busy carriers, and a coroutine can tell whether it is mounted here.
 */
public abstract class CarrierBase {

    static final System.Logger LOG = System.getLogger("io.cosched");

    protected final int index;
    protected volatile Thread thread;
    private volatile Object current; // the step or task running now, null when between tasks

    protected CarrierBase(int index) {
        this.index = index;
    }

    /** The scheduler this carrier belongs to. */
    public abstract SchedulerCore owner();

    public final int index() {
        return index;
    }

    /** The carrier's thread, or {@code null} before it started. */
    public final Thread thread() {
        return thread;
    }

    /** Whether the calling code runs on this carrier's thread itself (not in a coroutine mounted on it). */
    public final boolean inCarrierThread() {
        return Thread.currentThread() == thread;
    }

    /**
     * Whether the calling code runs on this carrier right now: on its thread, or as a coroutine
     * mounted on it. A coroutine that reads its own reference in {@code current} was put there by
     * this carrier's thread immediately before it was mounted, so the check needs no carrier lookup.
     */
    public final boolean isCurrent() {
        Thread me = Thread.currentThread();
        if (me == thread) {
            return true;
        }
        return current instanceof CoroutineImpl<?> co && co.thread == me;
    }

    /** Whether this carrier is running a task now. */
    public final boolean isBusy() {
        return current != null;
    }

    /** Whether this carrier is running a coroutine step now. */
    public final boolean isRunningCoroutine() {
        return current instanceof CoroutineImpl<?>;
    }

    /** Runs one queued item: a coroutine step or a foreign continuation. */
    protected final void runQueued(Runnable item) {
        current = item;
        try {
            if (item instanceof CoroutineImpl<?> co) {
                co.runStep();
            } else {
                item.run();
            }
        } catch (Throwable e) {
            // runContinuation does not throw; a foreign task might. Keep the carrier alive.
            LOG.log(System.Logger.Level.ERROR, "cosched carrier " + thread.getName() + ": task failed", e);
        } finally {
            current = null;
        }
    }

    /** Runs a timer's task on this carrier, isolating the carrier from what it throws. */
    final void runTimer(TimerImpl timer) {
        current = timer;
        try {
            timer.runTask();
        } catch (Throwable e) {
            LOG.log(System.Logger.Level.WARNING, "cosched timer task " + timer.task() + " threw on "
                    + thread.getName() + (timer.recurring ? " (the recurring timer stays armed)" : ""), e);
        } finally {
            current = null;
        }
    }

    /** Platform thread of a carrier; carries a reference back to it. */
    public static final class CarrierThread extends FastThreadLocalThread {
        private final CarrierBase carrier;

        CarrierThread(CarrierBase carrier, Runnable task, String name, boolean daemon) {
            super(task, name);
            this.carrier = carrier;
            setDaemon(daemon);
        }

        public CarrierBase carrier() {
            return carrier;
        }
    }

    /** The carrier whose thread is the calling thread, or {@code null}. */
    public static CarrierBase ofCurrentThread() {
        return Thread.currentThread() instanceof CarrierThread ct ? ct.carrier : null;
    }
}
