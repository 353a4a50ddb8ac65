package io.cosched.internal;

import io.netty.channel.IoEventLoop;
import io.netty.util.concurrent.ScheduledFuture;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The timers of one event loop. The {@link TimerQueue} is touched only on the loop's thread (or
 * by a coroutine mounted on it); other threads post changes to an inbox that the loop applies in
 * one task. The loop wakes for the earliest deadline through one Netty scheduled task, which Netty
 * turns into the epoll_wait timeout (timerfd), so timers cost no extra thread.
 */
public final class LoopTimers implements TimerHost {

    private static final VarHandle INBOX_SCHEDULED;
    private static final VarHandle LOOP_PENDING;

    static {
        try {
            INBOX_SCHEDULED = MethodHandles.lookup().findVarHandle(LoopTimers.class, "inboxScheduled", int.class);
            LOOP_PENDING = MethodHandles.lookup().findVarHandle(LoopTimers.class, "loopPending", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

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
    private final java.util.function.Consumer<TimerImpl> fire = this::fire;
    private volatile int inboxScheduled;
    private volatile boolean closed;

    // loop-confined
    private ScheduledFuture<?> wake;
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
    TimerImpl add(long delay, boolean recurring, Runnable task, Object condition, Thread wakeThread) {
        if (closed) {
            throw carrier.runtime.rejectedTimer();
        }
        long now = ticker.nanoTime();
        TimerImpl t = new TimerImpl(this, now, delay, recurring, task, condition, wakeThread);
        if (carrier.isCurrent()) {
            countPending(1, true);
            queue.push(t, now + delay); // nobody else can have seen t yet: no need to read it locked
            armWakeFor(now + delay);
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
            queue.forget(t);
        } else {
            countPending(-1, false);
            post(t);
        }
    }

    @Override
    public void moved(TimerImpl t) {
        if (carrier.isCurrent()) {
            queue.sync(t);
            armWakeFor(t.linkedDeadline);
        } else {
            post(t);
        }
    }

    private void post(TimerImpl t) {
        inbox.offer(t);
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
        TimerImpl t;
        while ((t = inbox.poll()) != null) {
            queue.sync(t);
        }
        runDue();
    }

    private void onWake() {
        assert carrier.inCarrierThread();
        wake = null;
        runDue();
    }

    private void runDue() {
        queue.expire(ticker.nanoTime(), fire);
        armWake();
    }

    private void fire(TimerImpl t) {
        if (!t.recurring) {
            countPending(-1, true);
        }
        carrier.runTimer(t);
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
        long delay = Math.max(0, due - ticker.nanoTime());
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
        closed = true;
        TimerImpl t;
        while ((t = inbox.poll()) != null) {
            queue.sync(t);
        }
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
