package io.cosched.internal;

import java.time.Duration;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BiConsumer;
import java.util.function.BooleanSupplier;
import org.jspecify.annotations.Nullable;

/**
 * The parking behind {@link io.cosched.Coroutines}. Each wait parks on a flag of its own (never on
 * a coroutine's resume permit), so a wake-up that arrives late cannot leak into a later wait, and
 * spurious returns from park are simply looped over.
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
        if (co != null) {
            co.beginWait(true);
        }
        try {
            parkUntil(NEVER, limit, limit, "sleeping", null);
        } finally {
            limit.cancel();
            if (co != null) {
                co.endWait(true);
            }
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
            if (co != null) {
                co.beginWait(false);
            }
            try {
                parkUntil(done, limit, done, "awaiting", stage);
            } finally {
                if (limit != null) {
                    limit.cancel();
                }
                if (co != null) {
                    co.endWait(false);
                }
            }
            if (!done.done) {
                throw new io.cosched.AwaitTimeoutException(new java.util.concurrent.TimeoutException(
                        "await timed out after " + timeout + " (the stage was left as it was)"));
            }
        }
        return done.result();
    }

    /** Parks the current thread until {@code finished} reports true; for compute and similar hand-offs. */
    public static void parkUntil(BooleanSupplier finished, Object blocker, Runnable onInterrupt)
            throws InterruptedException {
        if (finished.getAsBoolean()) {
            return;
        }
        CoroutineImpl<?> co = CoroutineImpl.current();
        if (co != null) {
            co.beginWait(false);
        }
        try {
            parkUntil(finished, null, blocker, "waiting", null);
        } catch (InterruptedException e) {
            onInterrupt.run();
            throw e;
        } finally {
            if (co != null) {
                co.endWait(false);
            }
        }
    }

    /**
     * The park loop of every wait here: parks the calling thread until {@code done} holds (returns
     * true), {@code limit} passes (returns false; a null limit never does) or the thread is
     * interrupted (throws, the flag cleared). A wake-up that changes neither is spurious and parked over.
     */
    static boolean parkUntil(
            BooleanSupplier done, @Nullable Deadline limit, Object blocker, String what, @Nullable Object subject)
            throws InterruptedException {
        for (; ; ) {
            if (done.getAsBoolean()) {
                return true;
            }
            if (limit != null && limit.passed()) {
                return false;
            }
            if (Thread.interrupted()) {
                throw new InterruptedException("interrupted while " + what + (subject == null ? "" : " " + subject));
            }
            if (limit == null) {
                LockSupport.park(blocker);
            } else {
                limit.park(blocker);
            }
        }
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
