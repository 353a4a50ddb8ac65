package io.cosched.internal;

import io.cosched.PoolScheduler;
import io.cosched.SchedulerStats;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

/**
 * The {@link PoolScheduler}. Unbound coroutines
 * go through one shared FIFO queue that any carrier takes from; bound ones through their carrier's
 * own queue. With {@code useCaller}, the last carrier has no thread of its own: the thread calling
 * {@code runOnCaller()} or {@code stop()} becomes it.
 */
public final class PoolRuntime extends CoroutineRuntime implements PoolScheduler {

    private static final long CARRIER_EXIT_NANOS = TimeUnit.SECONDS.toNanos(10);

    private final PoolCarrier[] carriers;
    private final boolean useCaller;
    private final boolean daemon;
    private final SharedTarget shared = new SharedTarget();
    private final RunQueue sharedQueue = new RunQueue();
    private final AtomicInteger idle = new AtomicInteger();
    private final AtomicInteger wakeCursor = new AtomicInteger();
    private final AtomicBoolean callerTaken = new AtomicBoolean();
    private final LongAdder wakeUps = new LongAdder();
    private volatile boolean terminate; // carriers leave their loops
    private volatile boolean closed; // queues hand everything to the orphan executor

    public PoolRuntime(RuntimeSettings settings) {
        super(settings, Ticker.SYSTEM);
        this.useCaller = settings.useCaller();
        this.daemon = settings.daemon();
        this.carriers = new PoolCarrier[settings.threads()];
        for (int i = 0; i < carriers.length; i++) {
            carriers[i] = new PoolCarrier(this, i, name + "-" + i);
        }
    }

    /** Carriers with a thread of their own. */
    private int ownThreads() {
        return useCaller ? carriers.length - 1 : carriers.length;
    }

    @Override
    public void start() {
        if (!markStarted()) {
            return;
        }
        for (int i = 0; i < ownThreads(); i++) {
            PoolCarrier c = carriers[i];
            Thread t = new Carrier.CarrierThread(
                    c, () -> c.runLoop(() -> terminate, Long.MAX_VALUE), c.threadName, daemon);
            c.thread = t; // before start: a submitter may wake it as soon as it is idle
            t.start();
        }
        startWatchdog();
    }

    // ---- placement -----------------------------------------------------------------------------

    /** Unbound coroutines start on the shared queue; a child of a bound coroutine stays on its carrier. */
    @Override
    public RunTarget place() {
        CoroutineImpl<?> ctx = CoroutineImpl.currentContext();
        if (ctx != null && ctx.scheduler == this && ctx.home instanceof PoolCarrier bound) {
            return bound;
        }
        return shared;
    }

    @Override
    public RunTarget carrier(int index) {
        return carriers[checkIndex(index, "carriers")];
    }

    @Override
    Carrier[] carrierArray() {
        return carriers;
    }

    /** The shared queue while some carrier is not stalled to take from it; else the JDK's default scheduler. */
    @Override
    RunTarget spillTarget(Carrier from) {
        for (PoolCarrier c : carriers) {
            if (c != from && !c.isStalled() && c.thread != null) {
                return shared;
            }
        }
        return orphanTarget;
    }

    @Override
    protected boolean ownsCarrier(Carrier carrier) {
        return carrier instanceof PoolCarrier && carrier.owner() == this;
    }

    /** The shared queue as a run target. */
    private final class SharedTarget implements RunTarget {
        @Override
        public void submitStep(CoroutineImpl<?> coroutine) {
            sharedQueue.offerStep(coroutine);
            afterSharedOffer();
        }

        @Override
        public void submitForeign(Runnable continuation) {
            sharedQueue.offerForeign(continuation);
            afterSharedOffer();
        }

        @Override
        public void coroutineStarted() {}

        @Override
        public void coroutineFinished() {}
    }

    private void afterSharedOffer() {
        if (closed) {
            sharedQueue.moveTo(orphanTarget); // stop() may have drained before our offer
        } else {
            wakeOne();
        }
    }

    Runnable pollShared() {
        return sharedQueue.poll();
    }

    boolean hasShared() {
        return !sharedQueue.isEmpty();
    }

    /** Wakes one idle carrier, starting the search where the last one ended so work spreads evenly. */
    private void wakeOne() {
        if (idle.get() == 0) {
            return; // every carrier is busy and will look at the shared queue before parking
        }
        int n = carriers.length;
        int start = Math.floorMod(wakeCursor.getAndIncrement(), n);
        for (int k = 0; k < n; k++) {
            if (carriers[(start + k) % n].wake()) {
                wakeUps.increment();
                return;
            }
        }
    }

    void idleEntered() {
        idle.incrementAndGet();
    }

    void idleLeft() {
        idle.decrementAndGet();
    }

    /** Carriers parked now. */
    public int idleCarriers() {
        return idle.get();
    }

    /** How many times a submission woke a parked carrier; for tests of the wake-up protocol. */
    public long wakeUps() {
        return wakeUps.sum();
    }

    boolean isClosed() {
        return closed;
    }

    // ---- caller as carrier -----------------------------------------------------------------------

    /** Runs the caller carrier on the calling thread until the scheduler has stopped. */
    @Override
    public void runOnCaller() {
        if (!useCaller) {
            throw new IllegalStateException(
                    "runOnCaller(): PoolScheduler '" + name + "' was built with useCaller(false)");
        }
        if (lifecycle() == NEW) {
            throw new IllegalStateException("runOnCaller(): PoolScheduler '" + name + "' is NEW (call start() first)");
        }
        checkNotInside("runOnCaller()");
        if (!callerTaken.compareAndSet(false, true)) {
            throw new IllegalStateException(
                    "runOnCaller(): another thread already runs the caller carrier of '" + name + "'");
        }
        try {
            runCallerCarrier(() -> terminate, Long.MAX_VALUE);
        } finally {
            callerTaken.set(false);
        }
    }

    private void runCallerCarrier(java.util.function.BooleanSupplier exit, long deadline) {
        PoolCarrier caller = carriers[carriers.length - 1];
        Thread me = Thread.currentThread();
        String ownName = me.getName();
        me.setName(caller.threadName); // so thread dumps and virtual threads' toString name the carrier
        try {
            caller.runLoop(exit, deadline);
        } finally {
            caller.thread = null;
            me.setName(ownName);
        }
    }

    // ---- stop ----------------------------------------------------------------------------------

    @Override
    protected String kind() {
        return "PoolScheduler";
    }

    /** With useCaller, the stopping thread drains as the caller carrier unless another thread already is it. */
    @Override
    protected boolean drain(long deadline) {
        if (!useCaller || !callerTaken.compareAndSet(false, true)) {
            return super.drain(deadline);
        }
        try {
            runCallerCarrier(() -> liveCoroutines() == 0 || System.nanoTime() - deadline >= 0, deadline);
        } finally {
            callerTaken.set(false);
        }
        return liveCoroutines() == 0;
    }

    @Override
    protected void shutDownCarriers() {
        terminate = true;
        for (PoolCarrier c : carriers) {
            c.nudge();
        }
        joinCarriers();
        closed = true;
        int handedOver = sharedQueue.moveTo(orphanTarget);
        for (PoolCarrier c : carriers) {
            handedOver += c.queue.moveTo(orphanTarget);
        }
        if (handedOver > 0) {
            LOG.log(
                    System.Logger.Level.INFO,
                    "PoolScheduler ''{0}'' stopped: {1} queued continuations handed to the "
                            + "JDK''s default scheduler",
                    name,
                    handedOver);
        }
    }

    private void joinCarriers() {
        long deadline = System.nanoTime() + CARRIER_EXIT_NANOS;
        for (int i = 0; i < ownThreads(); i++) {
            Thread t = carriers[i].thread;
            long remaining = deadline - System.nanoTime();
            if (t == null || remaining <= 0) {
                continue;
            }
            try {
                if (!t.join(Duration.ofNanos(remaining))) {
                    LOG.log(
                            System.Logger.Level.WARNING,
                            "PoolScheduler ''{0}'': carrier {1} did not finish its " + "current task within 10s",
                            name,
                            t.getName());
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    @Override
    void drained() {
        if (useCaller) {
            carriers[carriers.length - 1].nudge(); // a caller draining in stop() can return now
        }
    }

    // ---- stats ---------------------------------------------------------------------------------

    @Override
    SchedulerStats.Type type() {
        return SchedulerStats.Type.POOL;
    }

    @Override
    protected long timersPending() {
        return 0;
    }

    @Override
    RunQueue sharedRunQueue() {
        return sharedQueue;
    }
}
