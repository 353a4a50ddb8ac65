package io.cosched.internal;

import io.cosched.Coroutine;
import io.cosched.Coroutines;
import io.cosched.TaskScope;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.Callable;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import org.jspecify.annotations.Nullable;

/**
 * The machinery of a {@link TaskScope}: its forks and their counter, cancellation, the owner's waits, its deadline.
 * The owner (the thread that opened it) forks, joins and closes; subtasks complete in their own threads; a cancel
 * may come from either, or from the owner coroutine's interrupt.
 *
 * <p>The deadline, one of three. With a timeout of its own, the scope times itself out (a timer while the owner
 * joins) and its subtasks get the earlier of its deadline and the one it inherited. Without one, it inherits the
 * deadline of the coroutine it was opened in ({@link io.cosched.Coroutine#deadline()}), or of the compute-pool
 * subtask it was opened in ({@link ComputePool.Worker}): it reports it and hands it to its subtasks, but arms no timer
 * and never times itself out on it, since whoever set it interrupts the owner by then, which cancels the scope. With
 * neither, it has no deadline.
 */
public final class TaskScopeImpl<T, R> extends TaskScope<T, R> {

    private static final long NO_DEADLINE = CoroutineImpl.NO_DEADLINE;

    private final Joiner<? super T, ? extends R> joiner;
    private final Config config;
    private final Thread owner = Thread.currentThread();
    private final long openedAt = System.nanoTime();
    private final @Nullable CoroutineImpl<?> ownerCoroutine; // null: the owner is a plain thread
    private final CoroutineRuntime scheduler; // the owner's: whose hook and counters serve this scope
    private final @Nullable Duration timeout; // what it times itself out after: the config's, or none
    private final long inherited; // the owner's deadline (nanoTime), NO_DEADLINE: none; not the scope's to enforce
    private final long deadline; // the earlier of its timeout's and the inherited one: its subtasks'; or NO_DEADLINE
    private final Runnable onOwnerInterrupt = () -> cancel(ownerInterrupted());
    private final List<Fork<? extends T>> forks = new CopyOnWriteArrayList<>(); // few per scope; read by cancels
    private final AtomicInteger running = new AtomicInteger();
    private volatile @Nullable Cancel cancelledBy; // why it was cancelled; null while it is not
    // the owner's wait conditions, made once per scope: a wait allocates nothing
    private final BooleanSupplier settled = this::settled;
    private final BooleanSupplier slotFree = this::slotFree;
    private final BooleanSupplier ended = this::ended;
    private boolean joined; // owner only
    private boolean closed; // owner only

    /** Opens a scope owned by the calling thread; {@link TaskScope#open} is the way in. */
    public TaskScopeImpl(Joiner<? super T, ? extends R> joiner, Config config) {
        this.joiner = joiner;
        this.config = config;
        this.ownerCoroutine = CoroutineImpl.currentContext();
        // outside a coroutine: the IOManager Coroutines.go uses, where same-loop subtasks go
        this.scheduler = ownerCoroutine != null ? ownerCoroutine.scheduler() : IORuntime.defaultRuntime();
        this.inherited = ownerCoroutine != null ? ownerCoroutine.deadlineNanos() : ComputePool.currentForkDeadline();
        this.timeout = config.timeout();
        long own = timeout == null ? NO_DEADLINE : openedAt + timeout.toNanos();
        this.deadline = own == NO_DEADLINE || (inherited != NO_DEADLINE && inherited - own < 0) ? inherited : own;
        if (ownerCoroutine != null) {
            ownerCoroutine.addInterruptAction(onOwnerInterrupt);
        }
    }

    @Override
    public <U extends T> Subtask<U> fork(Callable<? extends U> task) {
        return fork(task, config.placement());
    }

    @Override
    public <U extends T> Subtask<U> fork(Callable<? extends U> task, Placement placement) {
        Objects.requireNonNull(task, "task: null (expected: the subtask's work)");
        Objects.requireNonNull(placement, "placement: null (expected: SAME_LOOP, ANY_LOOP or COMPUTE)");
        checkOwner("fork");
        if (joined || closed) {
            throw new IllegalStateException("scope '" + config.name() + "': fork after " + (closed ? "close" : "join"));
        }
        @SuppressWarnings("unchecked")
        Callable<Object> body = scheduler.scopeHook().decorate(config.name(), (Callable<Object>) task);
        Fork<U> f = new Fork<>(body);
        forks.add(f);
        if (joiner.onFork(f)) {
            cancel(Cancel.POLICY);
        }
        if (cancelledBy != null) {
            return f;
        }
        awaitFreeSlot();
        running.incrementAndGet();
        scheduler.forkStarted();
        try {
            start(f, placement);
        } catch (RuntimeException notStarted) { // the scheduler is stopping
            f.fail(notStarted);
            completed(f);
        }
        return f;
    }

    @Override
    public R join() throws InterruptedException {
        checkOwner("join");
        if (joined || closed) {
            throw new IllegalStateException("scope '" + config.name() + "': join after " + (closed ? "close" : "join"));
        }
        joined = true;
        Deadline limit = timeout == null ? null : Deadline.after(timeout.toNanos() - (System.nanoTime() - openedAt));
        try {
            switch (Waits.park(settled, limit, null, false, this)) {
                case INTERRUPTED -> cancel(ownerInterrupted());
                case DEADLINE_PASSED -> cancel(Cancel.DEADLINE);
                default -> {} // every subtask completed, or the scope was cancelled
            }
        } finally {
            if (limit != null) {
                limit.cancel();
            }
        }
        if (cancelledBy != null) {
            awaitEnded(); // no subtask outlives the join: their failures are known before the result is
        }
        if (cancelledBy == Cancel.OWNER_INTERRUPTED || cancelledBy == Cancel.OWNER_DEADLINE) {
            Thread.interrupted(); // what the wait saw is this same interrupt, thrown now
            throw new InterruptedException("scope '" + config.name() + "': interrupted while joining");
        }
        if (cancelledBy == Cancel.DEADLINE) {
            throw timedOut(config.name(), Objects.requireNonNull(timeout, "a scope cancelled by its deadline has one"));
        }
        try {
            return joiner.result();
        } catch (Throwable t) {
            FailedException failed = failed(config.name(), t);
            for (Fork<? extends T> f : forks) {
                Throwable other = f.failure;
                if (other != null && other != t && !f.failedAfterCancel) {
                    failed.addSuppressed(other);
                }
            }
            throw failed;
        }
    }

    @Override
    public void close() {
        checkOwner("close");
        if (closed) {
            return;
        }
        closed = true;
        if (ownerCoroutine != null) {
            ownerCoroutine.removeInterruptAction(onOwnerInterrupt);
        }
        if (running.get() > 0) {
            cancel(Cancel.CLOSED);
            awaitEnded();
        }
    }

    @Override
    public boolean isCancelled() {
        return cancelledBy != null;
    }

    private void checkOwner(String what) {
        if (Thread.currentThread() != owner) {
            throw new IllegalStateException("scope '" + config.name() + "': " + what + " by " + Thread.currentThread()
                    + " (expected: its owner, " + owner + ")");
        }
    }

    private void start(Fork<?> f, Placement placement) {
        switch (placement) {
            case SAME_LOOP -> Coroutines.go(f);
            case ANY_LOOP -> {
                CoroutineImpl<?> here = CoroutineImpl.currentContext();
                if (here != null) {
                    here.scheduler().spawn(f);
                } else {
                    IORuntime.defaultRuntime().spawn(f);
                }
            }
            case COMPUTE -> ComputePool.executor().execute(f);
        }
    }

    /** Stops the scope: unfinished subtasks are interrupted (a coroutine's shields respected), none starts. */
    private void cancel(Cancel why) {
        synchronized (forks) { // the owner's interrupt action races with the owner and the subtasks
            if (cancelledBy != null) {
                return;
            }
            cancelledBy = why;
        }
        for (Fork<? extends T> f : forks) {
            f.interrupt();
        }
        LockSupport.unpark(owner);
    }

    /** In the subtask's thread: the subtask has ended. */
    private void completed(Fork<? extends T> f) {
        Cancel cancel = cancelledBy;
        boolean cancelledOne = f.state == Subtask.State.UNAVAILABLE || f.failedAfterCancel;
        scheduler.forkEnded(f.state == Subtask.State.FAILED, cancelledOne);
        if (cancelledOne && cancel != null) {
            long now = System.nanoTime();
            JfrEvents.forkCancelled(
                    config.name(),
                    ownerName(),
                    cancel.label,
                    f.startedAt == 0 ? 0 : now - f.startedAt,
                    deadline == NO_DEADLINE ? Long.MIN_VALUE : deadline - now);
        }
        if (f.state != Subtask.State.UNAVAILABLE && joiner.onComplete(f)) {
            cancel(Cancel.POLICY);
        }
        running.decrementAndGet();
        LockSupport.unpark(owner);
    }

    /**
     * Parks the owner while {@link Config#maxForks()} subtasks are unfinished; shielded, as an interrupt must not
     * leave a fork half made.
     */
    private void awaitFreeSlot() {
        Waits.park(slotFree, null, null, true, this);
    }

    /** Parks the owner until every subtask has ended; shielded: the scope would leak subtasks. */
    private void awaitEnded() {
        Waits.park(ended, null, null, true, this);
    }

    /**
     * Why the owner's interrupt cancels the scope: at or past the deadline it inherited, that deadline's enforcer
     * interrupted it, most likely; else something else did (a client that left).
     */
    private Cancel ownerInterrupted() {
        return inherited != NO_DEADLINE && System.nanoTime() - inherited >= 0
                ? Cancel.OWNER_DEADLINE
                : Cancel.OWNER_INTERRUPTED;
    }

    /** The deadline as a person reads it: {@code deadline in 120 ms}, {@code deadline passed 3 ms ago}. */
    private String deadlineText() {
        long left = deadline - System.nanoTime();
        return left >= 0
                ? "deadline in " + TimeUnit.NANOSECONDS.toMillis(left) + " ms"
                : "deadline passed " + TimeUnit.NANOSECONDS.toMillis(-left) + " ms ago";
    }

    /** Whether a join may stop waiting: every subtask completed, or the scope was cancelled. */
    private boolean settled() {
        return running.get() == 0 || cancelledBy != null;
    }

    private boolean slotFree() {
        return running.get() < config.maxForks();
    }

    private boolean ended() {
        return running.get() == 0;
    }

    /** What the owner works for (a request), else its thread: for dumps and events. */
    private Object ownerName() {
        Object what = ownerCoroutine == null ? null : ownerCoroutine.attachment();
        return what != null ? what : owner.getName().isEmpty() ? owner.toString() : owner.getName();
    }

    /** Why a scope was cancelled. */
    private enum Cancel {
        POLICY("its policy had its answer"),
        DEADLINE("its deadline passed"),
        OWNER_INTERRUPTED("its owner was interrupted"),
        OWNER_DEADLINE("its owner's deadline passed"),
        CLOSED("it was closed before its subtasks ended");

        final String label;

        Cancel(String label) {
            this.label = label;
        }
    }

    /** One subtask: its work, its outcome, and the thread or coroutine that runs it, for interrupts. */
    private final class Fork<U extends T> implements Subtask<U>, Runnable {
        private final Callable<Object> task;
        private volatile Subtask.State state = Subtask.State.UNAVAILABLE;
        private long startedAt; // written by its runner before it runs the task, read after completion
        private @Nullable U value;
        private volatile @Nullable Throwable failure;
        private volatile boolean failedAfterCancel;
        private volatile @Nullable Object
                runner; // its Coroutine, or its compute thread while it runs; guarded by this for threads

        Fork(Callable<Object> task) {
            this.task = task;
        }

        @Override
        @SuppressWarnings("unchecked")
        public void run() {
            CoroutineImpl<?> co = CoroutineImpl.current();
            ComputePool.Worker worker = co == null && Thread.currentThread() instanceof ComputePool.Worker w ? w : null;
            if (co != null) {
                co.attach(this); // a dump shows the scope and its owner
                if (deadline != NO_DEADLINE) {
                    co.deadline(deadline); // before its task runs: a scope it opens finds it
                }
            } else if (worker != null) {
                worker.forkDeadline = deadline; // the same for a compute thread, for as long as the task runs
            }
            synchronized (this) {
                runner = co != null ? co : Thread.currentThread();
            }
            try {
                if (cancelledBy != null) {
                    return; // cancelled before it ran: it never does
                }
                startedAt = System.nanoTime();
                U v = (U) task.call();
                value = v;
                state = Subtask.State.SUCCESS;
            } catch (Throwable t) {
                fail(t);
            } finally {
                synchronized (this) {
                    runner = null; // a pool thread goes on to other work: no interrupt may reach it now
                }
                if (worker != null) {
                    worker.forkDeadline = NO_DEADLINE; // nor this subtask's deadline
                }
                completed(this);
            }
        }

        void fail(Throwable t) {
            failedAfterCancel = cancelledBy != null;
            failure = t;
            state = Subtask.State.FAILED;
        }

        synchronized void interrupt() {
            Object r = runner;
            if (r instanceof Coroutine<?> c) {
                c.interrupt(); // waits for its shields
            } else if (r instanceof Thread t) {
                t.interrupt();
            }
        }

        @Override
        public Subtask.State state() {
            return state;
        }

        @Override
        @SuppressWarnings(
                "NullAway") // null when the task returned null: U's own nullness, which NullAway's standard mode does
        // not track
        public U get() {
            if (state != Subtask.State.SUCCESS) {
                throw new IllegalStateException(
                        "subtask of scope '" + config.name() + "' is " + state + " (expected: SUCCESS)");
            }
            return value;
        }

        @Override
        public Throwable exception() {
            if (state != Subtask.State.FAILED) {
                throw new IllegalStateException(
                        "subtask of scope '" + config.name() + "' is " + state + " (expected: FAILED)");
            }
            return Objects.requireNonNull(failure, "a FAILED subtask has its failure");
        }

        @Override
        public String toString() {
            return "subtask of scope '" + config.name() + "' (" + state
                    + (deadline == NO_DEADLINE ? "" : ", " + deadlineText()) + ") of " + ownerName();
        }
    }

    @Override
    public String toString() {
        Cancel why = cancelledBy;
        return "TaskScope[" + config.name() + ", running " + running.get()
                + (deadline == NO_DEADLINE ? "" : ", " + deadlineText())
                + (why != null ? ", cancelled: " + why.label : "") + "]";
    }
}
