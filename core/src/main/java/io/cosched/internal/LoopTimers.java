package io.cosched.internal;

import io.netty.util.concurrent.ScheduledFuture;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.ArrayList;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;

/**
 * The timers of one event loop. The {@link TimerQueue} is touched on the loop's thread (or by a
 * coroutine mounted on it); other threads post changes to an inbox that the loop applies in one
 * task. The loop wakes for the earliest deadline through one Netty scheduled task, which Netty turns
 * into the epoll_wait timeout (timerfd), so timers cost no extra thread.
 *
 * <p>One exception: while the loop is stalled, the stall watchdog fires its due timers elsewhere
 * ({@link #rescue}). So the queue sits behind a small lock, which the loop takes without contention
 * except during a stall, and never holds while a timer's task runs (that task may be the stall).
 * Each timer's state CAS decides who fires it: the loop or the rescuer, never both.
 */
final class LoopTimers implements TimerHost {

    private static final VarHandle INBOX_SCHEDULED =
            VarHandles.field(MethodHandles.lookup(), "inboxScheduled", int.class);
    private static final VarHandle LOOP_PENDING = VarHandles.field(MethodHandles.lookup(), "loopPending", int.class);
    private static final VarHandle LOCK = VarHandles.field(MethodHandles.lookup(), "lock", int.class);
    private static final long NONE = Long.MAX_VALUE;
    private static final long TIMER_SLACK_NANOS = 50_000;

    private final LoopCarrier carrier;
    private final Ticker ticker;
    private final TimerQueue queue;
    private final ConcurrentLinkedQueue<TimerImpl> inbox = new ConcurrentLinkedQueue<>();
    // Pending timers = loopPending + remotePending. The loop, which adds, fires and cancels most
    // timers, keeps its count with plain writes published by release stores; only other threads
    // pay for an atomic.
    private int loopPending;
    private final AtomicInteger remotePending = new AtomicInteger();
    private final Runnable processInbox = this::processInbox;
    private final Runnable onWake = this::onWake;
    private volatile int inboxScheduled;
    private volatile boolean closed;
    private volatile int lock; // 1 while the loop or the rescuer changes the queue

    // loop-confined
    private final ArrayList<TimerImpl> due = new ArrayList<>();
    private final java.util.function.Consumer<TimerImpl> collectDue = due::add;
    private @Nullable ScheduledFuture<?> wake; // guarded by lock as well: armWake reads the queue
    private long wakeAt;

    LoopTimers(LoopCarrier carrier, Ticker ticker) {
        this.carrier = carrier;
        this.ticker = ticker;
        this.queue = new TimerQueue(ticker.nanoTime());
    }

    /** Timers that will still fire. */
    public int pending() {
        return (int) LOOP_PENDING.getAcquire(this) + remotePending.get();
    }

    /** Adds {@code delta} to the pending count: cheaply on the loop, atomically elsewhere. */
    private void countPending(int delta, boolean onLoop) {
        if (onLoop) {
            LOOP_PENDING.setRelease(this, loopPending + delta);
        } else {
            remotePending.addAndGet(delta);
        }
    }

    @Override
    public long nanoTime() {
        return ticker.nanoTime();
    }

    /**
     * Adds a timer. {@code task == null} makes a wake-up timer that unparks {@code wakeThread}.
     *
     * @throws RejectedExecutionException when the loop has stopped
     */
    TimerImpl add(
            long delay,
            boolean recurring,
            @Nullable Runnable task,
            @Nullable Object condition,
            @Nullable Thread wakeThread) {
        if (closed) {
            throw carrier.runtime.rejectedTimer();
        }
        long now = ticker.nanoTime();
        TimerImpl t = new TimerImpl(this, now, delay, recurring, task, condition, wakeThread);
        if (carrier.isCurrent()) {
            countPending(1, true);
            lock();
            try {
                queue.push(t, now + delay); // nobody else can have seen t yet: no need to read it locked
                armWakeFor(now + delay);
            } finally {
                unlock();
            }
            nudgeIfStalled();
        } else {
            countPending(1, false);
            post(t);
            if (closed && inbox.remove(t)) {
                // lost the race with stop(): the loop will never see it
                countPending(-1, false);
                throw carrier.runtime.rejectedTimer();
            }
        }
        return t;
    }

    @Override
    public void cancelled(TimerImpl t) {
        if (carrier.isCurrent()) {
            countPending(-1, true);
            lock();
            try {
                queue.forget(t);
            } finally {
                unlock();
            }
        } else {
            countPending(-1, false);
            post(t);
        }
    }

    @Override
    public void moved(TimerImpl t) {
        if (carrier.isCurrent()) {
            lock();
            try {
                queue.sync(t);
                armWakeFor(t.linkedDeadline);
            } finally {
                unlock();
            }
            nudgeIfStalled();
        } else {
            post(t);
        }
    }

    private void post(TimerImpl t) {
        inbox.offer(t);
        nudgeIfStalled();
        if (inboxScheduled == 0 && INBOX_SCHEDULED.compareAndSet(this, 0, 1)) {
            try {
                carrier.loop().execute(processInbox);
            } catch (RejectedExecutionException e) {
                // the loop is shutting down; close() applies the inbox once it has terminated
                inboxScheduled = 0;
            }
        }
    }

    private void processInbox() {
        assert carrier.inCarrierThread();
        inboxScheduled = 0;
        runDue(false);
    }

    private void applyInbox() {
        TimerImpl t;
        while ((t = inbox.poll()) != null) {
            queue.sync(t);
        }
    }

    private void onWake() {
        assert carrier.inCarrierThread();
        runDue(true);
    }

    /**
     * Applies the inbox and fires what is due, outside the lock (a task may be long, or add timers),
     * then re-arms the wake: two lock holds per pass, whichever task started it.
     */
    private void runDue(boolean woken) {
        lock();
        try {
            if (woken) {
                wake = null;
            }
            applyInbox();
            queue.expire(ticker.nanoTime(), collectDue);
        } finally {
            unlock();
        }
        for (int i = 0, n = due.size(); i < n; i++) {
            TimerImpl t = due.get(i);
            if (!t.recurring) {
                countPending(-1, true);
            }
            carrier.runTimer(t);
        }
        due.clear();
        lock();
        try {
            armWake();
        } finally {
            unlock();
        }
    }

    /**
     * Fires, away from this stalled loop, its timers due by {@code now}: called by the stall watchdog.
     * A coroutine's wake-up unparks it from here, and its home being stalled, it resumes on another
     * loop; a task runs on another loop (or, with none free, on the JDK's default scheduler).
     *
     * @return the next deadline in the queue, or {@link Long#MAX_VALUE} when it is empty
     */
    long rescue(long now) {
        ArrayList<TimerImpl> fired = new ArrayList<>();
        long next;
        lock();
        try {
            if (closed) {
                return NONE;
            }
            applyInbox(); // a wake-up of a coroutine homed here but running elsewhere lands in the inbox
            queue.expire(now, fired::add);
            next = queue.isEmpty() ? NONE : queue.nextWakeNanos();
        } finally {
            unlock();
        }
        for (TimerImpl t : fired) {
            if (!t.recurring) {
                countPending(-1, false);
            }
            if (t.isWakeUp()) {
                t.runTask();
            } else {
                carrier.runtime.spillTarget(carrier).submitForeign(() -> runRescued(t));
            }
        }
        return next;
    }

    private void runRescued(TimerImpl t) {
        try {
            t.runTask();
        } catch (Throwable e) {
            Carrier.LOG.log(
                    System.Logger.Level.WARNING,
                    "cosched timer task " + t.task() + " threw (fired away from " + "its stalled loop "
                            + carrier.threadName() + ")" + (t.recurring ? " (the recurring timer stays armed)" : ""),
                    e);
        }
    }

    /** Tells the watchdog of a change to a stalled loop's timers: it fires them now, not at its next look. */
    private void nudgeIfStalled() {
        if (carrier.stalled) {
            carrier.runtime.nudgeWatchdog();
        }
    }

    // A spin lock: held for a few list operations at a time, by the loop and, during a stall, the
    // watchdog. Not reentrant: nothing called under it takes it again.
    private void lock() {
        while (!LOCK.compareAndSet(this, 0, 1)) {
            Thread.onSpinWait();
        }
    }

    private void unlock() {
        LOCK.setRelease(this, 0);
    }

    /**
     * After a timer was linked at {@code deadline}: it can only move the wake earlier, so when the
     * armed wake comes no later, nothing is to do. (The armed wake may be a slot's start, before any
     * deadline in it; it then re-arms for what is left.) The common case on the per-request path.
     */
    private void armWakeFor(long deadline) {
        if (wake != null && deadline - wakeAt >= 0) {
            return;
        }
        armWake();
    }

    /** Makes sure the loop wakes for the earliest deadline. */
    private void armWake() {
        if (queue.isEmpty()) {
            return;
        }
        long due = queue.nextWakeNanos();
        if (wake != null) {
            if (due - wakeAt >= 0) {
                return;
            }
            wake.cancel(false);
        }
        wakeAt = due;
        // Linux lets a sleeping thread's timer fire up to its slack late (50 us by default) to batch wake-ups: asked
        // that much early, the loop wakes about at the deadline. A wake that comes early (batched with another timer)
        // waits for the rest in full rather than spin through loop turns.
        long left = due - ticker.nanoTime();
        long delay = left > TIMER_SLACK_NANOS ? left - TIMER_SLACK_NANOS : Math.max(0, left);
        wake = carrier.loop().schedule(onWake, delay, TimeUnit.NANOSECONDS);
    }

    /**
     * Called once the loop has terminated (its thread is gone, so the queue is ours): wake-up
     * timers of coroutines still sleeping move to the JDK's delayed executor, so those coroutines
     * still wake; user timers are cancelled.
     *
     * @return how many user timers were cancelled
     */
    int close() {
        lock();
        try {
            return closeLocked();
        } finally {
            unlock();
        }
    }

    private int closeLocked() {
        closed = true;
        applyInbox();
        int[] cancelled = {0};
        long now = ticker.nanoTime();
        queue.drain(timer -> {
            if (timer.isWakeUp()) {
                countPending(-1, false);
                long delay = Math.max(0, timer.deadline() - now);
                CompletableFuture.delayedExecutor(delay, TimeUnit.NANOSECONDS).execute(timer::fireDetached);
            } else if (timer.cancelForStop()) {
                countPending(-1, false);
                cancelled[0]++;
            }
        });
        return cancelled[0];
    }

    /** Whether the timer's loop has stopped. */
    boolean isClosed() {
        return closed;
    }
}
