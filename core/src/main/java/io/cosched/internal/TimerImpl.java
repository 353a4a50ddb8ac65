package io.cosched.internal;

import io.cosched.Timer;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.lang.ref.WeakReference;
import java.time.Duration;
import java.util.concurrent.locks.LockSupport;
import org.jspecify.annotations.Nullable;

/**
 * One timer. Its public methods may run on any thread and change only the fields guarded by
 * {@code this}; the owning loop's {@link TimerQueue} learns of the change through the
 * {@link TimerHost} and keeps its links, which only the loop touches, in step.
 */
final class TimerImpl implements Timer {

    static final int PENDING = 0;
    static final int FIRED = 1;
    static final int CANCELLED = 2;

    private static final VarHandle STATE = VarHandles.field(MethodHandles.lookup(), "state", int.class);

    final TimerHost host;
    private final @Nullable Runnable task; // null for a wake-up timer
    private final @Nullable Thread wakeThread; // unparked when a wake-up timer fires
    private final @Nullable WeakReference<Object> condition;
    final boolean recurring;

    // PENDING -> FIRED (one-shot) or CANCELLED, by CAS: cancel needs no lock, and of a cancel and
    // a firing exactly one wins
    private volatile int state;

    // guarded by this
    private long delay; // the delay, or the period of a recurring timer
    private long armedAt; // when the current delay started counting
    private long deadline; // armedAt + delay

    // confined to the host's loop: where the TimerQueue has linked this timer
    @Nullable
    TimerImpl prev;

    @Nullable
    TimerImpl next;

    int slot = -1; // -1: not linked
    long linkedDeadline;

    TimerImpl(
            TimerHost host,
            long now,
            long delay,
            boolean recurring,
            @Nullable Runnable task,
            @Nullable Object condition,
            @Nullable Thread wakeThread) {
        this.host = host;
        this.task = task;
        this.wakeThread = wakeThread;
        this.condition = condition == null ? null : new WeakReference<>(condition);
        this.recurring = recurring;
        this.delay = delay;
        this.armedAt = now;
        this.deadline = now + delay;
    }

    // ---- Timer -------------------------------------------------------------------------------

    @Override
    public boolean cancel() {
        if (!STATE.compareAndSet(this, PENDING, CANCELLED)) {
            return false;
        }
        host.cancelled(this);
        return true;
    }

    @Override
    public boolean refresh() {
        return rearm(-1, true);
    }

    @Override
    public boolean reset(Duration delay, boolean fromNow) {
        long nanos = Durations.toNanos("delay", delay, recurring);
        return rearm(nanos, fromNow);
    }

    private boolean rearm(long newDelay, boolean fromNow) {
        long now = host.nanoTime();
        synchronized (this) {
            if (state != PENDING) {
                return false;
            }
            if (newDelay >= 0) {
                delay = newDelay;
            }
            if (fromNow) {
                armedAt = now;
            }
            deadline = armedAt + delay;
        }
        host.moved(this);
        return true;
    }

    // ---- for the owning loop -------------------------------------------------------------------

    boolean isPending() {
        return state == PENDING;
    }

    boolean hasFired() {
        return state == FIRED;
    }

    synchronized long deadline() {
        return deadline;
    }

    /**
     * Decides, under the lock, whether the timer linked at {@code entryDeadline} fires now.
     *
     * @return {@link #FIRED} to run the task (a one-shot is now done), {@link #PENDING} to run the
     *         task of a recurring timer that has been re-armed for its next period, or -1 to skip:
     *         cancelled, or moved to {@link #deadline()} by a change the queue has not seen yet
     */
    synchronized int claim(long entryDeadline, long now) {
        if (state != PENDING || deadline != entryDeadline) {
            return -1;
        }
        if (!recurring) {
            return STATE.compareAndSet(this, PENDING, FIRED) ? FIRED : -1; // else a cancel won
        }
        long next = deadline + delay;
        if (next - now <= 0) {
            next = now + delay; // fell behind: skip the missed runs instead of bunching them
        }
        armedAt = next - delay;
        deadline = next;
        return PENDING;
    }

    /** Marks a wake-up timer fired from outside its loop (after the loop stopped) and wakes its thread. */
    void fireDetached() {
        if (STATE.compareAndSet(this, PENDING, FIRED)) {
            LockSupport.unpark(wakeThread);
        }
    }

    /** Cancels a user timer because its loop stopped; returns whether it was pending. */
    boolean cancelForStop() {
        return STATE.compareAndSet(this, PENDING, CANCELLED);
    }

    boolean isWakeUp() {
        return task == null;
    }

    /** Runs the task, unless its condition has been collected. Called on the loop. */
    void runTask() {
        if (task == null) {
            LockSupport.unpark(wakeThread);
            return;
        }
        if (condition != null && condition.get() == null) {
            return;
        }
        task.run();
    }

    @Nullable
    Runnable task() {
        return task;
    }

    @Override
    public String toString() {
        return "Timer[" + (task == null ? "wake " + wakeThread : task) + (recurring ? ", recurring" : "") + "]";
    }
}
