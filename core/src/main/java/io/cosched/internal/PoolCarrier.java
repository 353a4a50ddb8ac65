package io.cosched.internal;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.locks.LockSupport;
import org.jspecify.annotations.Nullable;

/**
 * A carrier of a {@link PoolRuntime}: a platform thread that takes work from its own queue of bound
 * tasks and from the pool's shared queue, and parks when both are empty.
 *
 * <p>Wake-up protocol: an idle carrier publishes {@link #IDLE} and then looks at the queues once
 * more; a submitter enqueues and then looks for an {@code IDLE} carrier to flip to {@link #WOKEN}.
 * Both sides write before they read (volatile), so either the carrier sees the new item or the
 * submitter sees the carrier idle: no wake-up is lost. Only the side that wins the CAS out of
 * {@code IDLE} adjusts the pool's idle count.
 */
final class PoolCarrier extends Carrier {

    static final int BUSY = 0;
    static final int IDLE = 1;
    static final int WOKEN = 2;

    /** Every this many items a carrier looks at the shared queue first, so bound work cannot starve it. */
    private static final int SHARED_FIRST_EVERY = 61;

    private static final VarHandle PARK_STATE = VarHandles.field(MethodHandles.lookup(), "parkState", int.class);

    private final PoolRuntime pool;
    private volatile int parkState = BUSY;

    PoolCarrier(PoolRuntime pool, int index, String threadName) {
        super(index, threadName);
        this.pool = pool;
    }

    @Override
    public CoroutineRuntime owner() {
        return pool;
    }

    // ---- bound work (offers: Carrier) ------------------------------------------------------

    @Override
    boolean isClosed() {
        return pool.isClosed();
    }

    @Override
    void signal() {
        wake();
    }

    // ---- parking -------------------------------------------------------------------------------

    @Override
    boolean waitsForWork() {
        return parkState == IDLE;
    }

    /** Wakes this carrier if it is idle; true if this call did. */
    boolean wake() {
        if (parkState == IDLE && PARK_STATE.compareAndSet(this, IDLE, WOKEN)) {
            pool.idleLeft();
            LockSupport.unpark(thread);
            return true;
        }
        return false;
    }

    /**
     * The carrier loop: runs until {@code exit} says so. A caller carrier passes a deadline (its
     * stop timeout); pool threads pass {@code Long.MAX_VALUE}.
     */
    void runLoop(java.util.function.BooleanSupplier exit, long deadlineNanos) {
        thread = Thread.currentThread();
        // What ends an idle wait, made once per loop rather than once per idle
        java.util.function.BooleanSupplier woken = () -> parkState != IDLE || exit.getAsBoolean();
        Deadline limit =
                deadlineNanos == Long.MAX_VALUE ? null : Deadline.after(deadlineNanos - System.nanoTime(), null);
        int tick = 0;
        while (!exit.getAsBoolean()) {
            Runnable item;
            if (++tick == SHARED_FIRST_EVERY) {
                tick = 0;
                item = pool.pollShared();
                if (item == null) {
                    item = queue.poll();
                }
            } else {
                item = queue.poll();
                if (item == null) {
                    item = pool.pollShared();
                }
            }
            if (item != null) {
                runQueued(item);
                continue;
            }
            idle(exit, woken, limit);
        }
    }

    private void idle(
            java.util.function.BooleanSupplier exit,
            java.util.function.BooleanSupplier woken,
            @Nullable Deadline limit) {
        parkState = IDLE;
        pool.idleEntered();
        // Look again after publishing IDLE: an item offered before a submitter could see us idle is found here.
        if (!queue.isEmpty() || pool.hasShared() || exit.getAsBoolean()) {
            leaveIdle();
            return;
        }
        // An interrupt ends the park with the status cleared: nobody interrupts a carrier on purpose, so it is a
        // wake-up like any other, and the loop looks again.
        Waits.park(woken, limit, null, false, this);
        leaveIdle();
    }

    /**
     * Back to work. Still IDLE means no submitter woke us (we found work, or hit the deadline or
     * exit): then the idle count is ours to adjust; WOKEN means the waker adjusted it.
     */
    private void leaveIdle() {
        if (PARK_STATE.compareAndSet(this, IDLE, BUSY)) {
            pool.idleLeft();
        }
        parkState = BUSY; // before the watchdog's flag is read: it sets that flag, then reads this state
        pool.wakeRestingWatchdog();
    }

    /** Wakes the carrier whatever its state, so that it re-checks its exit condition. */
    void nudge() {
        Thread t = thread;
        if (t != null) {
            LockSupport.unpark(t);
        }
    }

    @Override
    public String toString() {
        return "PoolCarrier[" + threadName + "]";
    }
}
