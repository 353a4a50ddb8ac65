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

    static {
        try {
            INBOX_SCHEDULED = MethodHandles.lookup().findVarHandle(LoopTimers.class, "inboxScheduled", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final LoopCarrier carrier;
    private final Ticker ticker;
    private final TimerQueue queue = new TimerQueue();
    private final ConcurrentLinkedQueue<TimerImpl> inbox = new ConcurrentLinkedQueue<>();
    private final AtomicInteger pending = new AtomicInteger();
    private final Runnable processInbox = this::processInbox;
    private final Runnable onWake = this::onWake;
    private volatile int inboxScheduled;
    private volatile boolean closed;

    // loop-confined
    private ScheduledFuture<?> wake;
    private long wakeAt;

    LoopTimers(LoopCarrier carrier, Ticker ticker) {
        this.carrier = carrier;
        this.ticker = ticker;
    }

    /** Timers that will still fire. */
    public int pending() {
        return pending.get();
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
        TimerImpl t = new TimerImpl(this, ticker.nanoTime(), delay, recurring, task, condition, wakeThread);
        pending.incrementAndGet();
        if (carrier.isCurrent()) {
            queue.push(t, t.deadline());
            armWake();
        } else {
            post(t);
            if (closed && inbox.remove(t)) {
                // lost the race with stop(): the loop will never see it
                pending.decrementAndGet();
                throw carrier.runtime.rejectedTimer();
            }
        }
        return t;
    }

    @Override
    public void cancelled(TimerImpl t) {
        pending.decrementAndGet();
        if (carrier.isCurrent()) {
            queue.forget(t);
        } else {
            post(t);
        }
    }

    @Override
    public void moved(TimerImpl t) {
        if (carrier.isCurrent()) {
            queue.sync(t);
            armWake();
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
        queue.expire(ticker.nanoTime(), this::fire);
        armWake();
    }

    private void fire(TimerImpl t) {
        if (!t.recurring) {
            pending.decrementAndGet();
        }
        carrier.runTimer(t);
    }

    /** Makes sure the loop wakes for the earliest deadline. */
    private void armWake() {
        if (queue.isEmpty()) {
            return;
        }
        long due = queue.topDeadline();
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
                pending.decrementAndGet();
                long delay = Math.max(0, timer.deadline() - now);
                CompletableFuture.delayedExecutor(delay, TimeUnit.NANOSECONDS).execute(timer::fireDetached);
            } else if (timer.cancelForStop()) {
                pending.decrementAndGet();
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
