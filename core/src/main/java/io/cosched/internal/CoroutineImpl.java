package io.cosched.internal;

import io.cosched.Coroutine;
import io.cosched.CoroutineState;
import io.cosched.Parking;
import io.cosched.Shield;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.OptionalLong;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import org.jspecify.annotations.Nullable;

/**
 * One coroutine. The same object is the handle users get, the virtual thread's body
 * ({@link #run()}) and, in carrier mode, the virtual thread's scheduler ({@link #execute}): every
 * time the JDK makes the thread runnable it hands its continuation to this object, which queues
 * itself on its home {@link RunTarget}. So a resume allocates nothing, and the home is always known.
 */
public final class CoroutineImpl<T> implements Coroutine<T>, Executor, Runnable {

    // state values; their order matches CoroutineState
    static final int READY = 0;
    static final int RUNNING = 1;
    static final int WAITING = 2;
    static final int SLEEPING = 3;
    static final int DONE = 4;
    static final int FAILED = 5;
    static final int CANCELLED = 6;
    private static final CoroutineState[] STATES = CoroutineState.values();

    private static final VarHandle STATE = VarHandles.field(MethodHandles.lookup(), "state", int.class);
    private static final VarHandle PERMIT = VarHandles.field(MethodHandles.lookup(), "permit", int.class);

    /** {@link #deadlineNanos()} of a coroutine without a deadline. */
    public static final long NO_DEADLINE = Long.MIN_VALUE;

    /** Fallback mode only: the coroutine running on the current virtual thread. */
    private static final ThreadLocal<CoroutineImpl<?>> CURRENT_FALLBACK = new ThreadLocal<>();

    final CoroutineRuntime scheduler;
    final RunTarget home;
    private final Object task; // Callable<T> or Runnable
    private final boolean detached; // started by execute(): failures go to the uncaught-exception handler

    @SuppressWarnings("NullAway.Init") // set by CoroutineRuntime.spawn before start, never changed
    Thread thread;

    // The virtual thread's own continuation task. Captured from the first execute() call, which is
    // made synchronously by Thread.start() in CoroutineRuntime.spawn; the queue hand-off publishes it
    // to carriers and every later caller learned of this thread after that.
    @SuppressWarnings("NullAway.Init")
    private Runnable continuation;

    private volatile int state; // READY .. CANCELLED
    private volatile int permit; // 1 = a resume() is pending
    private @Nullable BooleanSupplier
            resumed; // the suspend's wait condition; the coroutine's own, made when first used
    private volatile boolean sleeping;
    private volatile @Nullable Object attachment; // what it works for, for dumps
    private volatile long deadline = NO_DEADLINE; // see Coroutine.deadline(): read by every scope it opens
    private final CoroutineResult<T> result = new CoroutineResult<>(this);
    // Open shields and an interrupt held back by them; guarded by this. Null until the first shield:
    // most coroutines never open one.
    private @Nullable List<OpenShield> shields;
    private boolean interruptPending;
    // Run by every interrupt, before it is delivered or held back by a shield: an open task scope cancels its
    // subtasks there, at once. Guarded by this; null until the first scope.
    private @Nullable List<Runnable> interruptActions;
    // What the body threw, as thrown: CompletableFuture.get() would strip a CompletionException
    // (an AwaitTimeoutException, say) down to its cause. Written before the result completes.
    private @Nullable Throwable failure;

    CoroutineImpl(CoroutineRuntime scheduler, RunTarget home, Object task, boolean detached) {
        this.scheduler = scheduler;
        this.home = home;
        this.task = task;
        this.detached = detached;
    }

    // ---- where am I --------------------------------------------------------------------------

    /** The coroutine running on the current thread, or {@code null}. */
    public static @Nullable CoroutineImpl<?> current() {
        CoroutineThreads threads = CoroutineThreads.get();
        if (threads.isCarrierMode()) {
            if (threads.currentScheduler() instanceof CoroutineImpl<?> co && co.thread == Thread.currentThread()) {
                return co;
            }
            return null;
        }
        return Thread.currentThread().isVirtual() ? CURRENT_FALLBACK.get() : null;
    }

    /**
     * The coroutine whose placement the current thread shares: the current coroutine, or, for a
     * virtual thread that inherited a coroutine's scheduler, that coroutine. {@code null} otherwise.
     */
    public static @Nullable CoroutineImpl<?> currentContext() {
        CoroutineThreads threads = CoroutineThreads.get();
        if (threads.isCarrierMode()) {
            return threads.currentScheduler() instanceof CoroutineImpl<?> co ? co : null;
        }
        return Thread.currentThread().isVirtual() ? CURRENT_FALLBACK.get() : null;
    }

    public CoroutineRuntime scheduler() {
        return scheduler;
    }

    public RunTarget home() {
        return home;
    }

    // ---- the JDK's side: scheduling continuations -------------------------------------------

    /** Called by the JDK, with the continuation pinned, whenever a thread using this scheduler is runnable. */
    @Override
    public void execute(Runnable r) {
        Runnable own = continuation;
        if (r == own) {
            makeReady();
            if (home instanceof Carrier carrier) {
                carrier.countWakeup();
            }
            home.submitStep(this);
        } else if (own == null) {
            // the first submission, from Thread.start() in CoroutineRuntime.spawn
            continuation = r;
            home.submitStep(this);
        } else {
            home.submitForeign(r);
        }
    }

    private void makeReady() {
        for (; ; ) {
            int s = state;
            if (s >= DONE || s == READY) {
                return;
            }
            if (STATE.compareAndSet(this, s, READY)) {
                return;
            }
        }
    }

    /** Runs one step of this coroutine on the calling carrier: from here until it parks, yields or ends. */
    void runStep() {
        STATE.compareAndSet(this, READY, RUNNING);
        continuation.run();
        // It parked, yielded or finished. A concurrent resume may already have made it READY again,
        // and a finish made it terminal: only a state still RUNNING is ours to change.
        if (state == RUNNING) {
            STATE.compareAndSet(this, RUNNING, sleeping ? SLEEPING : WAITING);
        }
    }

    /** The continuation step as a plain task, for the JDK's default scheduler after the carriers stopped. */
    Runnable orphanStep() {
        return this::runStep;
    }

    // ---- the coroutine's own body --------------------------------------------------------------

    @Override
    public void run() {
        boolean carrierMode = scheduler.carrierMode;
        if (!carrierMode) {
            CURRENT_FALLBACK.set(this);
            scheduler.counters.fallbackStarted();
            STATE.compareAndSet(this, READY, RUNNING);
        }
        @Nullable T value = null;
        Throwable thrown = null;
        boolean returned = false;
        try {
            if (state != CANCELLED) {
                value = call();
                returned = true;
            }
        } catch (Throwable e) {
            thrown = e;
        } finally {
            if (!carrierMode) {
                CURRENT_FALLBACK.remove();
            }
            // Counted before the result is published: whoever sees the result (join, toFuture)
            // no longer sees this coroutine as live in the stats, and stop() never waits on it.
            scheduler.coroutineFinished(this);
        }
        if (thrown != null) {
            if (casFromAnyLive(FAILED)) {
                failure = thrown;
                result.fail(thrown);
                if (detached) {
                    thread.getUncaughtExceptionHandler().uncaughtException(thread, thrown);
                }
            }
        } else if (returned && casFromAnyLive(DONE)) {
            result.set(value);
        }
    }

    @SuppressWarnings("unchecked")
    private @Nullable T call() throws Exception {
        if (task instanceof Callable<?> c) {
            return (T) c.call();
        }
        ((Runnable) task).run();
        return null;
    }

    private boolean casFromAnyLive(int terminal) {
        for (; ; ) {
            int s = state;
            if (s >= DONE) {
                return false;
            }
            if (STATE.compareAndSet(this, s, terminal)) {
                return true;
            }
        }
    }

    // ---- helpers for code inside the coroutine -------------------------------------------------

    /** Parks the calling coroutine (which must be this one) until {@link #resume()}. */
    public void suspendSelf() throws InterruptedException {
        BooleanSupplier resumed = this.resumed;
        if (resumed == null) {
            resumed = this::takeResume;
            this.resumed = resumed; // the suspending coroutine's own field: made once, at its first suspend
        }
        if (Waits.park(resumed, null, null, false, this) == Parking.Outcome.INTERRUPTED) {
            throw new InterruptedException("coroutine " + name() + " interrupted while suspended");
        }
    }

    /** Takes the pending resume, if there is one. */
    private boolean takeResume() {
        return (int) PERMIT.getAndSet(this, 0) == 1;
    }

    /**
     * Marks a helper wait. In carrier mode the step wrapper reports WAITING or SLEEPING itself once
     * the thread has unmounted; this only tells it which. In fallback mode no wrapper sees the
     * parks, so the helpers keep the state and the counters.
     */
    public void beginWait(boolean sleep) {
        if (sleep) {
            sleeping = true;
            scheduler.counters.sleepingAdd(1);
        }
        if (!scheduler.carrierMode) {
            STATE.compareAndSet(this, RUNNING, sleep ? SLEEPING : WAITING);
            if (!sleep) {
                scheduler.counters.fallbackWaitingAdd(1);
            }
        }
    }

    public void endWait(boolean sleep) {
        if (sleep) {
            sleeping = false;
            scheduler.counters.sleepingAdd(-1);
        }
        if (!scheduler.carrierMode) {
            STATE.compareAndSet(this, sleep ? SLEEPING : WAITING, RUNNING);
            if (!sleep) {
                scheduler.counters.fallbackWaitingAdd(-1);
            }
        }
    }

    // ---- Coroutine -------------------------------------------------------------------------

    @Override
    public long id() {
        return thread.threadId();
    }

    @Override
    public String name() {
        String n = thread.getName();
        return n.isEmpty() ? scheduler.name + "-co-" + thread.threadId() : n;
    }

    @Override
    public CoroutineState state() {
        return STATES[state];
    }

    @Override
    public void attach(Object what) {
        attachment = what;
    }

    @Override
    public @Nullable Object attachment() {
        return attachment;
    }

    @Override
    public OptionalLong deadline() {
        long d = deadline;
        return d == NO_DEADLINE ? OptionalLong.empty() : OptionalLong.of(d);
    }

    /** Its deadline as a nanoTime, {@link #NO_DEADLINE} when it has none: what a scope reads, with no Optional. */
    public long deadlineNanos() {
        return deadline;
    }

    @Override
    public void deadline(long nanoTime) {
        deadline = nanoTime == NO_DEADLINE ? nanoTime + 1 : nanoTime; // a nanosecond off, not "none"
    }

    @Override
    public void clearDeadline() {
        deadline = NO_DEADLINE;
    }

    @Override
    public T join() throws InterruptedException, ExecutionException {
        try {
            return result.get();
        } catch (ExecutionException e) {
            Throwable thrown = failure;
            throw thrown != null && thrown != e.getCause() ? new ExecutionException(thrown) : e;
        }
    }

    @Override
    public CompletableFuture<T> toFuture() {
        return result;
    }

    @Override
    public boolean cancel() {
        if (!casFromAnyLive(CANCELLED)) {
            return false;
        }
        result.cancelled();
        interrupt();
        return true;
    }

    /** Runs {@code action} at each interrupt (and cancel) of this coroutine until removed. */
    public void addInterruptAction(Runnable action) {
        synchronized (this) {
            if (interruptActions == null) {
                interruptActions = new ArrayList<>(2);
            }
            interruptActions.add(action);
        }
    }

    public void removeInterruptAction(Runnable action) {
        synchronized (this) {
            if (interruptActions != null) {
                interruptActions.remove(action);
            }
        }
    }

    @Override
    public void interrupt() {
        List<OpenShield> open;
        List<Runnable> actions;
        synchronized (this) {
            actions = interruptActions == null || interruptActions.isEmpty() ? null : List.copyOf(interruptActions);
        }
        if (actions != null) {
            for (Runnable a : actions) {
                a.run();
            }
        }
        synchronized (this) {
            if (shields == null || shields.isEmpty()) {
                open = null;
            } else if (interruptPending) {
                return; // the shields' actions ran for the first interrupt already
            } else {
                interruptPending = true;
                open = List.copyOf(shields);
            }
        }
        if (open == null) {
            thread.interrupt();
            return;
        }
        for (OpenShield s : open) {
            s.interrupted();
        }
    }

    /** A shield that shields nothing: for code outside any coroutine. */
    public static final Shield NO_SHIELD = new Shield() {
        @Override
        public boolean interruptPending() {
            return false;
        }

        @Override
        public void close() {}
    };

    /** Opens a shield of this coroutine; see {@link io.cosched.Coroutines#shield}. */
    public Shield openShield(Runnable onInterrupt) {
        OpenShield s = new OpenShield(onInterrupt);
        boolean pending;
        synchronized (this) {
            if (shields == null) {
                shields = new ArrayList<>(2);
            }
            shields.add(s);
            pending = interruptPending;
        }
        if (pending) {
            s.interrupted(); // the coroutine is being interrupted: this section should end soon too
        }
        return s;
    }

    private final class OpenShield implements Shield {
        private final Runnable onInterrupt;
        private boolean closed; // guarded by the coroutine
        private boolean acted; // guarded by the coroutine

        OpenShield(Runnable onInterrupt) {
            this.onInterrupt = onInterrupt;
        }

        void interrupted() {
            synchronized (CoroutineImpl.this) {
                if (closed || acted) {
                    return;
                }
                acted = true;
            }
            try {
                onInterrupt.run();
            } catch (RuntimeException e) {
                // the interrupt is still delivered when the shields close; the action's failure is its own
                System.getLogger(Shield.class.getName())
                        .log(
                                System.Logger.Level.WARNING,
                                "the interrupt action of a shield of " + name() + " failed",
                                e);
            }
        }

        @Override
        public boolean interruptPending() {
            synchronized (CoroutineImpl.this) {
                return interruptPending && !closed;
            }
        }

        @Override
        public void close() {
            boolean deliver;
            synchronized (CoroutineImpl.this) {
                if (closed) {
                    return;
                }
                closed = true;
                List<OpenShield> all = Objects.requireNonNull(shields, "an open shield is in the list");
                all.remove(this);
                deliver = all.isEmpty() && interruptPending;
                if (deliver) {
                    interruptPending = false;
                }
            }
            if (deliver) {
                thread.interrupt();
            }
        }
    }

    @Override
    public Thread thread() {
        return thread;
    }

    @Override
    public void resume() {
        if ((int) PERMIT.getAndSet(this, 1) == 0) {
            LockSupport.unpark(thread);
        }
    }

    @Override
    public String toString() {
        return "Coroutine[" + name() + ", " + state() + ", " + scheduler.name + "]";
    }
}
