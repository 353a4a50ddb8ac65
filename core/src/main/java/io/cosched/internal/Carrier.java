package io.cosched.internal;

import io.cosched.CarrierStats;
import io.netty.util.concurrent.FastThreadLocalThread;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import org.jspecify.annotations.Nullable;

/**
 * A carrier: one platform thread that runs coroutine steps. It records what it runs, so stats can
 * count running coroutines and busy carriers, and a coroutine can tell whether it is mounted here.
 */
public abstract class Carrier implements RunTarget {

    static final System.Logger LOG = System.getLogger("io.cosched");

    private static final VarHandle PROGRESS = VarHandles.field(MethodHandles.lookup(), "progress", long.class);
    private static final VarHandle LOCAL_WAKEUPS = VarHandles.field(MethodHandles.lookup(), "localWakeups", long.class);

    protected final int index;
    final String threadName;
    /** Coroutine steps and continuations homed on this carrier, waiting for it. */
    final RunQueue queue = new RunQueue();

    private final AtomicInteger live = new AtomicInteger();
    protected volatile @Nullable Thread thread;
    private volatile @Nullable Object current; // the step or task running now, null when between tasks
    // Tasks begun (and, for a loop, watchdog pings answered). Written only by the carrier's thread,
    // with a release store: this is the whole hot-path cost of stall detection.
    private long progress;
    // Resumes of coroutines homed here, by where the unpark came from. Local ones are counted by
    // this carrier's thread alone (on it, or in a coroutine mounted on it), so a plain increment
    // published by a release store does; remote ones come from any thread.
    private long localWakeups;
    private final LongAdder remoteWakeups = new LongAdder();
    private final LongAdder monitorWakeups = new LongAdder();
    volatile boolean stalled; // set and cleared by the stall watchdog
    // When somebody looking (the watchdog, a loop chooser) first saw the current progress count: how
    // long the carrier has been in one task, without the carrier reading a clock. Lookers write it
    // racily; a lost update only makes a look count from later.
    private volatile long lookedProgress = -1;
    private volatile long lookedAt;
    private volatile long osThreadId = ThreadTimes.UNKNOWN; // set by the carrier thread as it starts

    protected Carrier(int index, String threadName) {
        this.index = index;
        this.threadName = threadName;
    }

    /** The scheduler this carrier belongs to. */
    public abstract CoroutineRuntime owner();

    public final int index() {
        return index;
    }

    /** The carrier's thread, or {@code null} before it started. */
    public final @Nullable Thread thread() {
        return thread;
    }

    /** Whether the calling code runs on this carrier's thread itself (not in a coroutine mounted on it). */
    public final boolean inCarrierThread() {
        return Thread.currentThread() == thread;
    }

    /**
     * Whether the calling code runs on this carrier right now: on its thread, or as a coroutine
     * mounted on it. A coroutine that reads its own reference in {@code current} was put there by
     * this carrier's thread immediately before it was mounted, so the check needs no carrier lookup.
     */
    public final boolean isCurrent() {
        Thread me = Thread.currentThread();
        if (me == thread) {
            return true;
        }
        return current instanceof CoroutineImpl<?> co && co.thread == me;
    }

    /**
     * Counts the resume of a coroutine homed here: local when this carrier's own thread asked for
     * it (a loop that read the bytes, a timer of the loop, a coroutine mounted here), remote when
     * another thread did (a JDK poller or unparker, a pool thread): that one costs a thread hop and,
     * for a loop, an eventfd write. A resume the JDK's monitor unblocker asked for (a coroutine that
     * blocked entering a {@code synchronized} block now free) is counted apart: remote too, but it says
     * nothing about where I/O resumes.
     */
    final void countWakeup() {
        if (isCurrent()) {
            LOCAL_WAKEUPS.setRelease(this, localWakeups + 1);
        } else if (MonitorUnblocker.is(Thread.currentThread())) {
            monitorWakeups.increment();
        } else {
            remoteWakeups.increment();
        }
    }

    /** Resumes asked for by this carrier's own thread. */
    public final long localWakeups() {
        return (long) LOCAL_WAKEUPS.getAcquire(this);
    }

    /** Resumes asked for by any other thread but the JDK's monitor unblocker. */
    public final long remoteWakeups() {
        return remoteWakeups.sum();
    }

    /** Resumes of coroutines blocked entering a monitor, asked for by the JDK's monitor unblocker. */
    public final long monitorWakeups() {
        return monitorWakeups.sum();
    }

    /** Whether this carrier is running a task now. */
    public final boolean isBusy() {
        return current != null;
    }

    /** Whether this carrier is running a coroutine step now. */
    public final boolean isRunningCoroutine() {
        return current instanceof CoroutineImpl<?>;
    }

    /** Whether the stall watchdog sees this carrier stuck in one task now. */
    public final boolean isStalled() {
        return stalled;
    }

    /**
     * Whether, as far as lookers have seen by {@code now}, this carrier has been inside the same task
     * for at least {@code nanos}. Every call is a look: a new task seen now counts from now.
     */
    final boolean inOneTaskFor(long nanos, long now) {
        long p = progress();
        if (current == null) {
            return false;
        }
        if (p != lookedProgress) {
            lookedAt = now; // before the count: a looker that sees the new count sees its time
            lookedProgress = p;
            return false;
        }
        return now - lookedAt >= nanos;
    }

    /** The carrier thread's id in the OS, or {@link ThreadTimes#UNKNOWN}. */
    final long osThreadId() {
        return osThreadId;
    }

    final CarrierStats.State state() {
        return stalled
                ? CarrierStats.State.STALLED
                : current != null ? CarrierStats.State.BUSY : CarrierStats.State.IDLE;
    }

    /** What the carrier runs now: a coroutine, a timer or a foreign task; {@code null} between tasks. */
    final @Nullable Object currentTask() {
        return current;
    }

    /** Tasks begun so far; the watchdog compares two readings. */
    final long progress() {
        return (long) PROGRESS.getOpaque(this);
    }

    /** Counts one unit of progress; on the carrier's thread only. */
    final void advance() {
        PROGRESS.setRelease(this, progress + 1);
    }

    private void begin(Object item) {
        advance();
        current = item;
    }

    /** The name its thread has (or will have) while it serves. */
    public final String threadName() {
        return threadName;
    }

    // ---- RunTarget: the one offer path of both kinds of carrier ------------------------------

    @Override
    public final void submitStep(CoroutineImpl<?> coroutine) {
        queue.offerStep(coroutine);
        afterOffer();
    }

    @Override
    public final void submitForeign(Runnable continuation) {
        queue.offerForeign(continuation);
        afterOffer();
    }

    @Override
    public final void coroutineStarted() {
        live.incrementAndGet();
    }

    @Override
    public final void coroutineFinished() {
        live.decrementAndGet();
    }

    /**
     * After an offer. The flags are read after the item was queued, and the stop and the watchdog
     * set them before they empty the queue: so either they move our item, or we see the flag here.
     */
    private void afterOffer() {
        if (isClosed()) {
            queue.moveTo(owner().orphanTarget);
        } else if (stalled) {
            spillQueued();
        } else {
            signal();
        }
    }

    /**
     * Called by the watchdog right after it marked this carrier stalled: hands what is queued here
     * to {@link CoroutineRuntime#spillTarget}. Later submissions see the flag and spill themselves.
     *
     * @return how many items moved
     */
    final int spillQueued() {
        return queue.moveTo(owner().spillTarget(this));
    }

    /** Whether the carrier has stopped for good: what is queued here goes to the JDK's default scheduler. */
    abstract boolean isClosed();

    /** Makes sure the carrier will look at its queue: schedules a loop's drain, wakes a parked pool carrier. */
    abstract void signal();

    /** Coroutines homed on this carrier and not finished (for a pool carrier, those bound to it). */
    public final int liveCoroutines() {
        return live.get();
    }

    /** Coroutine steps queued here. */
    public final long readySteps() {
        return queue.readySteps();
    }

    /** Coroutine steps and continuations waiting for this carrier. */
    public long queueDepth() {
        return queue.depth();
    }

    /** Whether the carrier can no longer serve although its scheduler runs (its loop was shut down). */
    boolean hasFailed() {
        return false;
    }

    /**
     * Whether the carrier is idle now, waiting for work: a loop in its poll (epoll_wait) for I/O or a timer, a
     * pool's carrier parked with empty queues. Nothing to ping, nothing that can get stuck.
     */
    boolean waitsForWork() {
        return false;
    }

    /**
     * Asks the carrier to prove it is alive by counting progress soon. Only a loop can be asked
     * (idle there means epoll_wait, not parked); others return {@code false}.
     *
     * @return whether a ping was posted
     */
    boolean ping() {
        return false;
    }

    /**
     * Called by the watchdog while this carrier is stalled: runs elsewhere what this carrier was to
     * run at a time (its due timers).
     *
     * @return when to call again, or {@link Long#MAX_VALUE} for never
     */
    long rescueTimers(long now) {
        return Long.MAX_VALUE;
    }

    /** Runs one queued item: a coroutine step or a foreign continuation. */
    protected final void runQueued(Runnable item) {
        begin(item);
        try {
            if (item instanceof CoroutineImpl<?> co) {
                co.runStep();
            } else {
                item.run();
            }
        } catch (Throwable e) {
            // runContinuation does not throw; a foreign task might. Keep the carrier alive.
            LOG.log(
                    System.Logger.Level.ERROR,
                    "cosched carrier " + Thread.currentThread().getName() + ": task failed",
                    e);
        } finally {
            current = null;
        }
    }

    /** Runs a timer's task on this carrier, isolating the carrier from what it throws. */
    final void runTimer(TimerImpl timer) {
        begin(timer);
        try {
            timer.runTask();
        } catch (Throwable e) {
            LOG.log(
                    System.Logger.Level.WARNING,
                    "cosched timer task " + timer.task() + " threw on "
                            + Thread.currentThread().getName()
                            + (timer.recurring ? " (the recurring timer stays armed)" : ""),
                    e);
        } finally {
            current = null;
        }
    }

    /** Platform thread of a carrier; carries a reference back to it. */
    public static final class CarrierThread extends FastThreadLocalThread {
        private final Carrier carrier;

        CarrierThread(Carrier carrier, Runnable task, String name, boolean daemon) {
            super(task, name);
            this.carrier = carrier;
            setDaemon(daemon);
        }

        public Carrier carrier() {
            return carrier;
        }

        @Override
        public void run() {
            carrier.osThreadId = ThreadTimes.currentOsThreadId();
            super.run();
        }
    }

    /** Counts one unit of progress of the carrier whose thread calls this (a loop reading a socket); elsewhere nothing. */
    public static void countProgressOfCurrentThread() {
        Carrier c = ofCurrentThread();
        if (c != null) {
            c.advance();
        }
    }

    /** The carrier whose thread is the calling thread, or {@code null}. */
    public static @Nullable Carrier ofCurrentThread() {
        return Thread.currentThread() instanceof CarrierThread ct ? ct.carrier : null;
    }
}
