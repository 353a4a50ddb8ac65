package io.cosched;

import io.cosched.internal.ComputePool;
import io.cosched.internal.CoroutineImpl;
import io.cosched.internal.CoroutineRuntime;
import io.cosched.internal.Deadline;
import io.cosched.internal.JfrEvents;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.Callable;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;

/**
 * Structured fan-out for a coroutine: open a scope, {@link #fork} subtasks, {@link #join} them under a policy (a
 * {@link Joiner}), close it. No subtask outlives its scope: when the policy has its answer (a fork failed and all
 * must succeed, or one succeeded and any will do), when the scope's deadline passes, when its owner is interrupted,
 * and when it is closed early, the unfinished subtasks are interrupted and the scope waits for them to end. Shaped
 * after the JDK's {@code StructuredTaskScope} (a preview in JDK 25-27) so that moving to it later is a matter of
 * names, and working on JDK 21-25 without {@code --enable-preview}.
 *
 * <pre>{@code
 * try (TaskScope<Object, Void> scope = TaskScope.open()) {          // all must succeed
 *     TaskScope.Subtask<Price> price = scope.fork(() -> prices.get(sku));   // each blocks: JDBC, HTTP
 *     TaskScope.Subtask<Stock> stock = scope.fork(() -> stocks.get(sku));
 *     scope.join();                  // parks; a failure cancels the sibling and is thrown here
 *     return new Offer(price.get(), stock.get());
 * }
 * }</pre>
 *
 * <p>Subtasks run as coroutines on the owner's event loop by default (their I/O stays on that loop's
 * connections), or as the {@link Config} or the fork says: on the IOManager's least loaded loop, or on
 * cosched's compute pool for CPU-heavy work. An interrupt of a coroutine subtask waits for its shields, so a
 * cancelled subtask never breaks a pooled connection. Only the owner (the thread that opened the scope) forks,
 * joins and closes it.
 *
 * <p>When the owner is a coroutine, interrupting or cancelling it cancels its open scopes at once, even while it
 * is busy elsewhere or a shield holds its own interrupt back. Its scheduler's {@link ScopeHook} gives a scope
 * opened without a timeout the owner's deadline (in a web request, what is left of the request's timeout) and
 * carries the owner's context into each subtask. Each subtask's coroutine names its scope and owner in dumps;
 * the scheduler counts subtasks ({@link SchedulerStats#forks()}), and a cancelled one is recorded as the JFR
 * event {@code io.cosched.ForkCancelled}.
 *
 * @param <T> what the subtasks return
 * @param <R> what {@link #join()} returns
 */
public final class TaskScope<T, R> implements AutoCloseable {

    /** Where a subtask runs. */
    public enum Placement {
        /** A coroutine on the owner's loop (or scheduler); outside a coroutine, where {@link Coroutines#go} puts one. */
        SAME_LOOP,
        /** A coroutine on the owner's IOManager's least loaded loop: for subtasks that would crowd the owner's loop. */
        ANY_LOOP,
        /** A thread of cosched's compute pool ({@link Coroutines#computePool()}): for CPU-heavy work. */
        COMPUTE
    }

    /**
     * How a scope is configured: a name (for the thread names of dumps and for exceptions), a timeout, how many
     * subtasks may run at once ({@link #fork} parks the owner while that many are unfinished), and where subtasks
     * run unless their fork says.
     */
    public record Config(String name, @Nullable Duration timeout, int maxForks, Placement placement) {

        static final Config DEFAULT = new Config("scope", null, Integer.MAX_VALUE, Placement.SAME_LOOP);

        public Config {
            Objects.requireNonNull(name, "name: null (expected: a name)");
            Objects.requireNonNull(placement, "placement: null (expected: SAME_LOOP, ANY_LOOP or COMPUTE)");
            if (timeout != null) {
                Arguments.positive("timeout", timeout);
            }
            Arguments.positive("maxForks", maxForks);
        }

        public Config withName(String name) {
            return new Config(name, timeout, maxForks, placement);
        }

        /**
         * The scope's deadline, from when it is opened; past it {@link #join()} throws {@link TimeoutException}.
         * Without one, a scope takes the time its owner has left, if its {@link ScopeHook} knows it.
         */
        public Config withTimeout(Duration timeout) {
            return new Config(name, Arguments.positive("timeout", timeout), maxForks, placement);
        }

        public Config withMaxForks(int maxForks) {
            return new Config(name, timeout, maxForks, placement);
        }

        public Config withPlacement(Placement placement) {
            return new Config(name, timeout, maxForks, placement);
        }
    }

    /** A forked subtask: its outcome once it has completed. */
    public interface Subtask<T> extends Supplier<T> {

        /** What a subtask has come to. */
        enum State {
            /** Not completed yet, or never: the scope was cancelled before it ran, or it was cancelled. */
            UNAVAILABLE,
            /** It returned a value. */
            SUCCESS,
            /** It threw. */
            FAILED
        }

        State state();

        /**
         * Its value.
         *
         * @throws IllegalStateException unless it succeeded
         */
        @Override
        T get();

        /**
         * What it threw.
         *
         * @throws IllegalStateException unless it failed
         */
        Throwable exception();
    }

    /**
     * The policy of a scope: told of each fork and each completion, it says whether the scope should stop waiting
     * (its other subtasks are then interrupted), and gives {@link #join()}'s result. Completions are told in the
     * completing subtasks' threads, several at once: a policy of one's own must be thread-safe.
     */
    public interface Joiner<T, R> {

        /** A subtask was forked; true cancels the scope. */
        default boolean onFork(Subtask<? extends T> subtask) {
            return false;
        }

        /** A subtask completed (succeeded or failed); true cancels the scope. */
        default boolean onComplete(Subtask<? extends T> subtask) {
            return false;
        }

        /** The result of {@link #join()}, or the failure it throws (wrapped in a {@link FailedException}). */
        R result() throws Throwable;

        /** All must succeed: the first failure cancels the others and is thrown; {@code join} returns null. */
        static <T> Joiner<T, Void> awaitAllSuccessfulOrThrow() {
            return new FirstFailure<T, Void>() {
                @Override
                Void success() {
                    return null;
                }
            };
        }

        /** All must succeed: the first failure cancels the others and is thrown; {@code join} returns the subtasks. */
        static <T> Joiner<T, Stream<Subtask<T>>> allSuccessfulOrThrow() {
            return new FirstFailure<T, Stream<Subtask<T>>>() {
                private final List<Subtask<T>> forked = new CopyOnWriteArrayList<>();

                @Override
                @SuppressWarnings("unchecked")
                public boolean onFork(Subtask<? extends T> subtask) {
                    forked.add((Subtask<T>) subtask);
                    return false;
                }

                @Override
                Stream<Subtask<T>> success() {
                    return forked.stream();
                }
            };
        }

        /** The first to succeed wins and the others are cancelled; {@code join} returns its value, or throws when all failed. */
        static <T> Joiner<T, T> anySuccessfulResultOrThrow() {
            return new Joiner<>() {
                private volatile @Nullable Subtask<? extends T> first;
                private volatile @Nullable Throwable failure;

                @Override
                public synchronized boolean onComplete(Subtask<? extends T> subtask) {
                    if (subtask.state() == Subtask.State.SUCCESS) {
                        if (first == null) {
                            first = subtask;
                        }
                        return true;
                    }
                    if (failure == null) {
                        failure = subtask.exception();
                    }
                    return false;
                }

                @Override
                public T result() throws Throwable {
                    Subtask<? extends T> won = first;
                    if (won != null) {
                        return won.get();
                    }
                    Throwable f = failure;
                    throw f != null ? f : new IllegalStateException("no subtask succeeded: none was forked");
                }
            };
        }

        /** Every subtask runs to its end, whatever the others do; {@code join} returns null. Read the outcomes from the subtasks. */
        @SuppressWarnings("NullAway") // a Void result is null; NullAway's standard mode does not track R's nullness
        static <T> Joiner<T, Void> awaitAll() {
            return () -> null;
        }
    }

    /** The policy's failure, thrown by {@link #join()}: the first failure is the cause, the others are suppressed. */
    public static final class FailedException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        FailedException(String scope, Throwable cause) {
            super("scope '" + scope + "': " + cause, cause);
        }
    }

    /** The scope's deadline passed before the policy had its answer; thrown by {@link #join()}. */
    public static final class TimeoutException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        TimeoutException(String scope, Duration timeout, boolean inherited) {
            super("scope '" + scope + "' timed out after " + timeout + (inherited ? " (what its owner had left)" : "")
                    + ": its unfinished subtasks were cancelled");
        }
    }

    private final Joiner<? super T, ? extends R> joiner;
    private final Config config;
    private final Thread owner = Thread.currentThread();
    private final long openedAt = System.nanoTime();
    private final @Nullable CoroutineImpl<?> ownerCoroutine; // null: the owner is a plain thread
    private final CoroutineRuntime home; // whose hook and counters serve this scope
    private final @Nullable Duration timeout; // the config's, else what the owner had left; null: none
    private final Runnable onOwnerInterrupt = () -> cancel(Cancel.OWNER_INTERRUPTED);
    private final List<Fork<? extends T>> forks = new CopyOnWriteArrayList<>(); // few per scope; read by cancels
    private final AtomicInteger running = new AtomicInteger();
    private volatile @Nullable Cancel cancelledBy; // why it was cancelled; null while it is not
    private boolean joined; // owner only
    private boolean closed; // owner only

    private TaskScope(Joiner<? super T, ? extends R> joiner, Config config) {
        this.joiner = joiner;
        this.config = config;
        this.ownerCoroutine = CoroutineImpl.currentContext();
        // outside a coroutine: the IOManager Coroutines.go uses, where same-loop subtasks go
        this.home =
                ownerCoroutine != null ? ownerCoroutine.scheduler() : (CoroutineRuntime) IOManager.defaultInstance();
        Duration left = config.timeout() == null ? home.scopeHook().remainingTime() : null;
        this.timeout =
                config.timeout() != null ? config.timeout() : left == null || !left.isNegative() ? left : Duration.ZERO;
        if (ownerCoroutine != null) {
            ownerCoroutine.addInterruptAction(onOwnerInterrupt);
        }
    }

    /** A scope where all subtasks must succeed: the first failure cancels the others and is thrown by {@link #join()}. */
    public static <T> TaskScope<T, Void> open() {
        return open(Joiner.awaitAllSuccessfulOrThrow());
    }

    /** A scope with {@code joiner}'s policy. */
    public static <T, R> TaskScope<T, R> open(Joiner<? super T, ? extends R> joiner) {
        return open(joiner, c -> c);
    }

    /** A scope with {@code joiner}'s policy, configured from the defaults ({@code c -> c.withTimeout(...)}). */
    public static <T, R> TaskScope<T, R> open(Joiner<? super T, ? extends R> joiner, UnaryOperator<Config> configure) {
        Objects.requireNonNull(joiner, "joiner: null (expected: a policy, e.g. Joiner.awaitAllSuccessfulOrThrow())");
        return new TaskScope<>(
                joiner, Objects.requireNonNull(configure.apply(Config.DEFAULT), "configure: returned null"));
    }

    /** Forks {@code task} where the scope's {@link Config#placement()} says. */
    public <U extends T> Subtask<U> fork(Callable<? extends U> task) {
        return fork(task, config.placement());
    }

    /**
     * Forks {@code task} at {@code placement}. Parks the owner while {@link Config#maxForks()} subtasks are
     * unfinished. A fork after the scope was cancelled never runs (its state stays {@code UNAVAILABLE}).
     *
     * @throws IllegalStateException when called by another thread than the owner, or after join or close
     */
    public <U extends T> Subtask<U> fork(Callable<? extends U> task, Placement placement) {
        Objects.requireNonNull(task, "task: null (expected: the subtask's work)");
        Objects.requireNonNull(placement, "placement: null (expected: SAME_LOOP, ANY_LOOP or COMPUTE)");
        checkOwner("fork");
        if (joined || closed) {
            throw new IllegalStateException("scope '" + config.name() + "': fork after " + (closed ? "close" : "join"));
        }
        @SuppressWarnings("unchecked")
        Callable<Object> body = home.scopeHook().decorate(config.name(), (Callable<Object>) task);
        Fork<U> f = new Fork<>(body);
        forks.add(f);
        if (joiner.onFork(f)) {
            cancel(Cancel.POLICY);
        }
        if (cancelledBy != null) {
            return f;
        }
        awaitBelow(config.maxForks());
        running.incrementAndGet();
        home.forkStarted();
        try {
            start(f, placement);
        } catch (RuntimeException notStarted) { // the scheduler is stopping
            f.fail(notStarted);
            completed(f);
        }
        return f;
    }

    /**
     * Waits until every subtask has completed or the policy has its answer, the deadline passed or the owner was
     * interrupted; cancels what is unfinished then and waits for it to end; returns the policy's result.
     *
     * @throws FailedException      when the policy fails (all must succeed and one failed; none succeeded)
     * @throws TimeoutException     when the scope's deadline passed first
     * @throws InterruptedException when the owner was interrupted while waiting (the subtasks have ended)
     */
    public R join() throws InterruptedException {
        checkOwner("join");
        if (joined || closed) {
            throw new IllegalStateException("scope '" + config.name() + "': join after " + (closed ? "close" : "join"));
        }
        joined = true;
        Deadline limit = timeout == null ? null : Deadline.after(timeout.toNanos() - (System.nanoTime() - openedAt));
        try {
            while (running.get() > 0 && cancelledBy == null) {
                if (Thread.interrupted()) {
                    cancel(Cancel.OWNER_INTERRUPTED);
                    break;
                }
                if (limit != null && limit.passed()) {
                    cancel(Cancel.DEADLINE);
                    break;
                }
                if (limit == null) {
                    LockSupport.park(this);
                } else {
                    limit.park(this);
                }
            }
        } finally {
            if (limit != null) {
                limit.cancel();
            }
        }
        if (cancelledBy != null) {
            awaitEnded(); // no subtask outlives the join: their failures are known before the result is
        }
        if (cancelledBy == Cancel.OWNER_INTERRUPTED) {
            Thread.interrupted(); // what the wait saw is this same interrupt, thrown now
            throw new InterruptedException("scope '" + config.name() + "': interrupted while joining");
        }
        if (cancelledBy == Cancel.DEADLINE) {
            throw new TimeoutException(
                    config.name(),
                    Objects.requireNonNull(timeout, "a scope cancelled by its deadline has one"),
                    config.timeout() == null);
        }
        try {
            return joiner.result();
        } catch (Throwable t) {
            FailedException failed = new FailedException(config.name(), t);
            for (Fork<? extends T> f : forks) {
                Throwable other = f.failure;
                if (other != null && other != t && !f.failedAfterCancel) {
                    failed.addSuppressed(other);
                }
            }
            throw failed;
        }
    }

    /** Cancels the unfinished subtasks and waits for them to end. Closing twice does nothing. */
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

    /** Whether the scope was cancelled: the policy had its answer, the deadline passed, or it was closed early. */
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
                    IOManager.defaultInstance().spawn(f);
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
        home.forkEnded(f.state == Subtask.State.FAILED, cancelledOne);
        if (cancelledOne && cancel != null) {
            JfrEvents.forkCancelled(
                    config.name(), ownerName(), cancel.label, f.startedAt == 0 ? 0 : System.nanoTime() - f.startedAt);
        }
        if (f.state != Subtask.State.UNAVAILABLE && joiner.onComplete(f)) {
            cancel(Cancel.POLICY);
        }
        running.decrementAndGet();
        LockSupport.unpark(owner);
    }

    /** Parks the owner until fewer than {@code n} subtasks are unfinished; not interruptible (the scope would leak). */
    private void awaitBelow(int n) {
        boolean interrupted = false;
        while (running.get() >= n) {
            LockSupport.park(this);
            interrupted |= Thread.interrupted();
        }
        if (interrupted) {
            owner.interrupt();
        }
    }

    private void awaitEnded() {
        awaitBelow(1);
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
            Coroutine<?> co = Coroutines.current().orElse(null);
            if (co != null) {
                co.attach(this); // a dump shows the scope and its owner
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
            return "subtask of scope '" + config.name() + "' (" + state + ") of " + ownerName();
        }
    }

    /** All must succeed; the first failure cancels the scope and is thrown. */
    private abstract static class FirstFailure<T, R> implements Joiner<T, R> {
        private volatile @Nullable Throwable first;

        @Override
        public synchronized boolean onComplete(Subtask<? extends T> subtask) {
            if (subtask.state() == Subtask.State.FAILED) {
                if (first == null) {
                    first = subtask.exception();
                }
                return true;
            }
            return false;
        }

        @Override
        public R result() throws Throwable {
            Throwable f = first;
            if (f != null) {
                throw f;
            }
            return success();
        }

        abstract R success();
    }

    @Override
    public String toString() {
        Cancel why = cancelledBy;
        return "TaskScope[" + config.name() + ", running " + running.get()
                + (why != null ? ", cancelled: " + why.label : "") + "]";
    }
}
