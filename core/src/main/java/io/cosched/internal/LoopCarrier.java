package io.cosched.internal;

import io.netty.channel.IoEventLoop;
import io.netty.util.concurrent.SingleThreadEventExecutor;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.RejectedExecutionException;

/**
 * One event loop of an IOManager as a carrier. Coroutine steps homed here go into this carrier's
 * own queue; one drain task in the loop's task queue runs them in batches. So a burst of resumes
 * costs one Netty task and at most one eventfd wake-up, and the queue stays ours: after the loop
 * stops, whatever is left in it is handed to the JDK's default scheduler instead of being lost
 * with Netty's task queue.
 */
final class LoopCarrier extends Carrier implements Runnable {

    /**
     * Steps run per drain before the loop gets back to I/O. Bounds how long a flood of runnable
     * coroutines (or one coroutine yielding in a loop) can delay socket reads: what is left runs right
     * after the loop's next look at its sockets ({@link #drainAfterIo}), not as another task, since
     * Netty runs the tasks posted while its tasks run in the same turn, for up to a second.
     */
    static final int BATCH = 256;

    private static final VarHandle DRAIN_SCHEDULED =
            VarHandles.field(MethodHandles.lookup(), "drainScheduled", int.class);

    final IORuntime runtime;
    private final boolean daemon;
    final LoopTimers timers;
    // The watchdog's pings, posted (by the watchdog thread only) and answered (by this loop only).
    private volatile long pingsPosted;
    private volatile long pingsAnswered;
    private final Runnable pong = () -> {
        pingsAnswered++; // only this loop's thread writes it
        advance();
    };

    @SuppressWarnings("NullAway.Init") // bound by its loop before the carrier runs anything
    private volatile IoEventLoop loop;

    private volatile int drainScheduled;
    // A drain stopped at BATCH: the rest runs after the next poll for I/O, which must not block (written by the
    // loop's thread only; drainScheduled stays set meanwhile, so no submitter posts a drain that would run first)
    private volatile boolean drainAfterIo;
    private volatile boolean closed;
    // In the loop's poll, able to block (written by the loop's thread only, see PollWatch)
    private volatile boolean polling;

    LoopCarrier(IORuntime runtime, int index, String threadName, boolean daemon, Ticker ticker) {
        super(index, threadName);
        this.runtime = runtime;
        this.daemon = daemon;
        this.timers = new LoopTimers(this, ticker);
    }

    @Override
    public CoroutineRuntime owner() {
        return runtime;
    }

    void bind(IoEventLoop loop) {
        this.loop = loop;
    }

    public IoEventLoop loop() {
        return loop;
    }

    /** Netty's thread-per-task executor for this loop: the loop's thread is a named carrier thread. */
    void startThread(Runnable loopBody) {
        Thread t = new CarrierThread(this, loopBody, threadName, daemon);
        thread = t;
        t.start();
    }

    // ---- offers (Carrier) ---------------------------------------------------------------------

    @Override
    boolean isClosed() {
        return closed;
    }

    @Override
    void signal() {
        scheduleDrain();
    }

    @Override
    boolean hasFailed() {
        IoEventLoop l = loop;
        return l != null && l.isShuttingDown();
    }

    /** Pings the watchdog has posted to this loop; for tests. */
    long pingsPosted() {
        return pingsPosted;
    }

    @Override
    boolean waitsForWork() {
        return polling;
    }

    /** The loop is about to wait in its poll (epoll_wait) for I/O or a timer; on the loop's thread. */
    void enterPoll() {
        if (!polling) {
            polling = true; // once per turn, though Netty may ask whether it can block more than once
        }
    }

    /**
     * The loop's poll returned: I/O is ready, a timer or a task is due, or the wait was cut short. A resting
     * watchdog (every loop was idle) watches again from here. On the loop's thread, and cheap when the loop was
     * not polling: called before the ready I/O is handled and once more at the end of every turn.
     */
    void leavePoll() {
        if (polling) {
            polling = false; // before the watchdog's flag is read: it sets that flag, then reads this one
            runtime.wakeRestingWatchdog();
        }
    }

    /** A Netty task that counts progress: answered at once by an idle loop, never by a stuck one. */
    @Override
    boolean ping() {
        pingsPosted++;
        try {
            loop.execute(pong);
            return true;
        } catch (RejectedExecutionException e) {
            pingsPosted--; // shutting down: nothing to watch any more
            return false;
        }
    }

    @Override
    long rescueTimers(long now) {
        return timers.rescue(now);
    }

    /** Puts the drain task in the loop's task queue unless it is there already. */
    private void scheduleDrain() {
        if (drainScheduled == 0 && DRAIN_SCHEDULED.compareAndSet(this, 0, 1)) {
            try {
                loop.execute(this);
            } catch (RejectedExecutionException e) {
                // The loop is shutting down and will not run us: nothing may wait for it.
                drainScheduled = 0;
                queue.moveTo(runtime.orphanTarget);
            }
        }
    }

    /** The drain task, on the loop thread. */
    @Override
    public void run() {
        assert inCarrierThread();
        int n = 0;
        for (; n < BATCH; n++) {
            Runnable item = queue.poll();
            if (item == null) {
                break;
            }
            runQueued(item);
        }
        if (n == BATCH && !queue.isEmpty()) {
            // the batch is spent and more is queued: the rest after the sockets have been looked at
            drainAfterIo = true;
            return;
        }
        // Clear the flag before looking at the queue again: a submitter that offered after our last
        // poll either sees the flag clear and schedules a drain, or we see its item here.
        drainScheduled = 0;
        if (!queue.isEmpty()) {
            scheduleDrain();
        }
    }

    /** Whether a drain waits for the loop's next poll, which must then only look, not wait. */
    boolean drainsAfterIo() {
        return drainAfterIo;
    }

    /** After the loop's poll and the I/O it found: the drain that waited for it, if any. On the loop's thread. */
    void afterIo() {
        if (drainAfterIo) {
            drainAfterIo = false;
            run();
        }
    }

    /** After the loop terminated: everything queued now and later goes to the JDK's default scheduler. */
    int close() {
        closed = true;
        return queue.moveTo(runtime.orphanTarget);
    }

    // ---- numbers -------------------------------------------------------------------------------

    /** Everything waiting for this loop: queued coroutine steps and continuations, and Netty's other tasks. */
    @Override
    public long queueDepth() {
        // Our drain task and the watchdog's ping sit in Netty's queue; they are not work waiting.
        // A ping that was posted and answered while Netty's count was read may be in that count, so
        // the pings are counted from "answered before" to "posted after" the read; the drain flag is
        // read on both sides for the same reason.
        long answered = pingsAnswered;
        int drain = drainScheduled;
        long netty = loop instanceof SingleThreadEventExecutor e ? e.pendingTasks() : 0;
        // a drain that waits for the next poll is no task of Netty's
        long ours = (drainAfterIo ? 0 : Math.max(drain, drainScheduled)) + (pingsPosted - answered);
        return super.queueDepth() + Math.max(0, netty - ours);
    }

    public int timersPending() {
        return timers.pending();
    }

    @Override
    public String toString() {
        return "LoopCarrier[" + threadName + "]";
    }
}
