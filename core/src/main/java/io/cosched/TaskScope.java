package io.cosched;

import io.cosched.internal.TaskScopeImpl;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.Callable;
import java.util.concurrent.CopyOnWriteArrayList;
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
 * is busy elsewhere or a shield holds its own interrupt back. A scope opened without a timeout of its own takes the
 * owner's {@link Coroutine#deadline()} as its deadline (in a web request, the request's), arming no timer: whoever
 * set it interrupts the owner by then, which cancels the scope. Its subtasks get the scope's deadline, the earlier of
 * its own timeout and the inherited one, so a scope opened in a subtask has it too. The scheduler's
 * {@link ScopeHook} carries the owner's context into each subtask. Each subtask's coroutine names its scope and owner in dumps;
 * the scheduler counts subtasks ({@link SchedulerStats#forks()}), and a cancelled one is recorded as the JFR
 * event {@code io.cosched.ForkCancelled}.
 *
 * <p>This class is the API; {@code io.cosched.internal.TaskScopeImpl}, the one class it permits, is the machinery
 * (as the JDK keeps {@code StructuredTaskScope} apart from its implementation).
 *
 * @param <T> what the subtasks return
 * @param <R> what {@link #join()} returns
 */
public abstract sealed class TaskScope<T, R> implements AutoCloseable permits TaskScopeImpl {

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
         * Without one, a scope takes its owner's {@link Coroutine#deadline()} (and ends when the owner is interrupted
         * by it), else the time its owner has left, if its {@link ScopeHook} knows it. Its subtasks get the earlier
         * of this timeout's deadline and the owner's.
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

        TimeoutException(String scope, Duration timeout) {
            super("scope '" + scope + "' timed out after " + timeout + ": its unfinished subtasks were cancelled");
        }
    }

    /** For its one implementation (the class is sealed). */
    protected TaskScope() {}

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
        return new TaskScopeImpl<>(
                joiner, Objects.requireNonNull(configure.apply(Config.DEFAULT), "configure: returned null"));
    }

    /** Forks {@code task} where the scope's {@link Config#placement()} says. */
    public abstract <U extends T> Subtask<U> fork(Callable<? extends U> task);

    /**
     * Forks {@code task} at {@code placement}. Parks the owner while {@link Config#maxForks()} subtasks are
     * unfinished. A fork after the scope was cancelled never runs (its state stays {@code UNAVAILABLE}).
     *
     * @throws IllegalStateException when called by another thread than the owner, or after join or close
     */
    public abstract <U extends T> Subtask<U> fork(Callable<? extends U> task, Placement placement);

    /**
     * Waits until every subtask has completed or the policy has its answer, the deadline passed or the owner was
     * interrupted; cancels what is unfinished then and waits for it to end; returns the policy's result.
     *
     * @throws FailedException      when the policy fails (all must succeed and one failed; none succeeded)
     * @throws TimeoutException     when the scope's deadline passed first
     * @throws InterruptedException when the owner was interrupted while waiting (the subtasks have ended)
     */
    public abstract R join() throws InterruptedException;

    /** Cancels the unfinished subtasks and waits for them to end. Closing twice does nothing. */
    @Override
    public abstract void close();

    /** Whether the scope was cancelled: the policy had its answer, the deadline passed, or it was closed early. */
    public abstract boolean isCancelled();

    /** For the implementation, in another package: {@link FailedException}'s constructor is not API. */
    @Internal
    protected static FailedException failed(String scope, Throwable cause) {
        return new FailedException(scope, cause);
    }

    /** For the implementation, in another package: {@link TimeoutException}'s constructor is not API. */
    @Internal
    protected static TimeoutException timedOut(String scope, Duration timeout) {
        return new TimeoutException(scope, timeout);
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
}
