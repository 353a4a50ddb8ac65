package io.cosched.internal;

import io.cosched.Parking;
import io.cosched.Parking.Outcome;
import java.time.Duration;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BiConsumer;
import java.util.function.BooleanSupplier;
import org.jspecify.annotations.Nullable;

/**
 * The parking behind {@link io.cosched.Coroutines}, and the one park loop of cosched ({@link #park}): every wait that
 * cosched parks for itself (sleep, await, compute, suspend, an idle pool carrier, the Netty helpers, a task scope's
 * owner) goes through it, and cosched's other modules reach it through {@link Parking}; {@link io.cosched.Channel}
 * and {@link io.cosched.WaitGroup} wait on the JDK's conditions instead. Each wait parks on a condition of its own,
 * so a wake-up that arrives late cannot leak into a later wait, and spurious returns from park are looped over.
 */
public final class Waits {

    private Waits() {}

    /** Sleeps {@code nanos}; an IOManager coroutine parks on its own loop's timers. */
    public static void sleep(long nanos) throws InterruptedException {
        if (nanos <= 0) {
            if (Thread.interrupted()) {
                throw new InterruptedException();
            }
            return;
        }
        CoroutineImpl<?> co = CoroutineImpl.current();
        Deadline limit = Deadline.after(nanos, co); // its timer is pending before the coroutine counts as sleeping
        try {
            if (loop(NEVER, limit, null, false, true, co, limit) == Outcome.INTERRUPTED) {
                throw new InterruptedException("interrupted while sleeping");
            }
        } finally {
            limit.cancel();
        }
    }

    /** Waits for {@code stage}; {@code timeoutNanos < 0} waits forever. */
    public static <T> T await(CompletionStage<T> stage, long timeoutNanos, @Nullable Duration timeout)
            throws InterruptedException {
        if (stage == null) {
            throw new NullPointerException("stage: null (expected: a CompletionStage to wait for)");
        }
        Completion<T> done = new Completion<>(Thread.currentThread());
        stage.whenComplete(done);
        if (!done.done) {
            CoroutineImpl<?> co = CoroutineImpl.current();
            Deadline limit = timeoutNanos >= 0 ? Deadline.after(timeoutNanos, co) : null;
            Outcome parked;
            try {
                parked = loop(done, limit, null, false, false, co, done);
            } finally {
                if (limit != null) {
                    limit.cancel();
                }
            }
            if (parked == Outcome.INTERRUPTED) {
                throw new InterruptedException("interrupted while awaiting " + stage);
            }
            if (!done.done) { // the deadline passed, unless the stage completed since: then it is in time
                throw new io.cosched.AwaitTimeoutException(new java.util.concurrent.TimeoutException(
                        "await timed out after " + timeout + " (the stage was left as it was)"));
            }
        }
        return done.result();
    }

    /** Parks the current thread until {@code finished} reports true; for compute and similar hand-offs. */
    public static void parkUntil(BooleanSupplier finished, Object blocker, Runnable onInterrupt)
            throws InterruptedException {
        if (park(finished, null, null, false, blocker) == Outcome.INTERRUPTED) {
            onInterrupt.run();
            throw new InterruptedException("interrupted while waiting");
        }
    }

    /**
     * The park loop of every wait: parks the calling thread until {@code ready} holds ({@link Outcome#READY}), the
     * thread is interrupted ({@link Outcome#INTERRUPTED}, its interrupt status cleared), {@code deadline} passes
     * ({@link Outcome#DEADLINE_PASSED}) or {@code idle} does ({@link Outcome#IDLE_PASSED}); checked in that order
     * before each park, a null limit never passing. Shielded, an interrupt does not end the wait: it is remembered
     * and the status set again on return. A coroutine counts as waiting in the fallback-mode stats while it parks.
     *
     * <p>{@code ready} runs in the waiting thread before each park, first before anything else: a wait that need not
     * park costs one call. A condition that also registers the thread as the one to wake (under the lock its waker
     * takes) loses no wake-up; with an idle limit, whose {@link Parking.IdleLimit#wake()} knows the thread only once
     * the wait has begun, the condition is looked at once more after that. The loop allocates nothing: a caller that
     * passes a condition kept in a field (not a lambda made per wait) and no deadline waits without allocating.
     */
    public static Outcome park(
            BooleanSupplier ready,
            @Nullable Deadline deadline,
            @Nullable IdleWatch idle,
            boolean shielded,
            Object blocker) {
        if (ready.getAsBoolean()) {
            return Outcome.READY;
        }
        return loop(ready, deadline, idle, shielded, false, CoroutineImpl.current(), blocker);
    }

    /** {@link #park} once {@code ready} was found false, for the coroutine {@code co} (null: none), maybe asleep. */
    private static Outcome loop(
            BooleanSupplier ready,
            @Nullable Deadline deadline,
            @Nullable IdleWatch idle,
            boolean shielded,
            boolean sleeping,
            @Nullable CoroutineImpl<?> co,
            Object blocker) {
        if (co != null) {
            co.beginWait(sleeping);
        }
        if (idle != null) {
            idle.begin();
        }
        boolean interrupted = false;
        try {
            boolean look = idle != null; // a waker may have found no thread to wake before begin(): look again
            for (; ; ) {
                if (look && ready.getAsBoolean()) {
                    return Outcome.READY;
                }
                look = true;
                if (Thread.interrupted()) {
                    if (!shielded) {
                        return Outcome.INTERRUPTED;
                    }
                    interrupted = true; // and parked over: a set status would make every park return at once
                }
                if (deadline != null && deadline.passed()) {
                    return Outcome.DEADLINE_PASSED;
                }
                if (idle != null && idle.passed()) {
                    return Outcome.IDLE_PASSED;
                }
                long nanos =
                        timedPark(deadline == null ? 0 : deadline.parkNanos(), idle == null ? 0 : idle.parkNanos());
                if (nanos == 0) {
                    LockSupport.park(blocker); // nothing to time, or a loop timer unparks us at the limit
                } else {
                    LockSupport.parkNanos(blocker, nanos);
                }
            }
        } finally {
            if (idle != null) {
                idle.end();
            }
            if (co != null) {
                co.endWait(sleeping);
            }
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** The shorter of two timed parks, 0 standing for none. */
    private static long timedPark(long a, long b) {
        return a == 0 ? b : b == 0 ? a : Math.min(a, b);
    }

    /** Marks a wait of the current coroutine for the fallback-mode counters; returns it (or null). */
    public static @Nullable CoroutineImpl<?> beginWait() {
        CoroutineImpl<?> co = CoroutineImpl.current();
        if (co != null) {
            co.beginWait(false);
        }
        return co;
    }

    public static void endWait(@Nullable CoroutineImpl<?> co) {
        if (co != null) {
            co.endWait(false);
        }
    }

    private static final BooleanSupplier NEVER = () -> false;

    private static final class Completion<T> implements BiConsumer<T, Throwable>, BooleanSupplier {
        private final Thread waiter;
        private @Nullable T value;
        private @Nullable Throwable failure;
        private volatile boolean done; // written last: publishes value and failure

        Completion(Thread waiter) {
            this.waiter = waiter;
        }

        @Override
        public void accept(T v, Throwable e) {
            value = v;
            failure = e;
            done = true;
            LockSupport.unpark(waiter);
        }

        @Override
        public boolean getAsBoolean() {
            return done;
        }

        @SuppressWarnings(
                "NullAway") // a stage may complete with null: T's own nullness, not tracked in NullAway's standard mode
        T result() {
            Throwable e = failure;
            if (e == null) {
                return value;
            }
            Throwable cause = e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
            if (cause instanceof CancellationException ce) {
                throw ce;
            }
            throw new CompletionException(cause);
        }
    }
}
