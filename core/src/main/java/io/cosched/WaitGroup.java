package io.cosched;

import io.cosched.internal.CoroutineImpl;
import io.cosched.internal.Durations;
import io.cosched.internal.Waits;
import java.time.Duration;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Waits for a group of coroutines to finish (as Go's {@code WaitGroup}): {@link #add}
 * before starting each, {@link #done()} when each ends, {@link #await()} for all.
 *
 * <pre>{@code
 * WaitGroup wg = new WaitGroup();
 * for (Request r : requests) {
 *     wg.add(1);
 *     Coroutines.go(() -> { try { call(r); } finally { wg.done(); } });
 * }
 * wg.await();
 * }</pre>
 */
public final class WaitGroup {

    private final ReentrantLock lock = new ReentrantLock();
    private final Condition zero = lock.newCondition();
    private long count;

    public WaitGroup() {}

    /** A group that starts with {@code count} pending members. */
    public WaitGroup(int count) {
        add(count);
    }

    /**
     * Adds {@code delta} (which may be negative) to the counter; waiters are released when it reaches 0.
     *
     * @throws IllegalStateException if the counter would go below 0
     */
    public void add(int delta) {
        lock.lock();
        try {
            long next = count + delta;
            if (next < 0) {
                throw new IllegalStateException(
                        "WaitGroup counter: " + next + " (expected: >= 0; done() was called more often than add())");
            }
            count = next;
            if (next == 0) {
                zero.signalAll();
            }
        } finally {
            lock.unlock();
        }
    }

    /** One member finished: {@code add(-1)}. */
    public void done() {
        add(-1);
    }

    /** The counter now. */
    public long count() {
        lock.lock();
        try {
            return count;
        } finally {
            lock.unlock();
        }
    }

    /** Waits until the counter is 0. */
    public void await() throws InterruptedException {
        lock.lockInterruptibly();
        try {
            CoroutineImpl<?> co = count == 0 ? null : Waits.beginWait();
            try {
                while (count != 0) {
                    zero.await();
                }
            } finally {
                Waits.endWait(co);
            }
        } finally {
            lock.unlock();
        }
    }

    /**
     * Waits at most {@code timeout} for the counter to reach 0.
     *
     * @return whether it did
     */
    public boolean await(Duration timeout) throws InterruptedException {
        long nanos = Durations.toNanos("timeout", timeout, false);
        lock.lockInterruptibly();
        try {
            CoroutineImpl<?> co = count == 0 ? null : Waits.beginWait();
            try {
                while (count != 0) {
                    if (nanos <= 0) {
                        return false;
                    }
                    nanos = zero.awaitNanos(nanos);
                }
                return true;
            } finally {
                Waits.endWait(co);
            }
        } finally {
            lock.unlock();
        }
    }
}
