package io.cosched.internal;

import io.cosched.CarrierModeUnavailableException;
import io.cosched.CarrierStats;
import io.cosched.Coroutine;
import io.cosched.Scheduler;
import io.cosched.SchedulerStats;
import io.cosched.ScopeHook;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import org.jspecify.annotations.Nullable;

/**
 * What both schedulers share, {@link IORuntime} (the {@link io.cosched.IOManager}) and
 * {@link PoolRuntime} (the {@link io.cosched.PoolScheduler}): the lifecycle (start, stop and the drain
 * between), coroutine creation, and the stall watchdog. The counters and stats live in
 * {@link RuntimeCounters}; what differs (the carriers, where a coroutine goes, how carriers shut down)
 * the subclasses say. Users hold these through the public interfaces; nothing else is exported.
 */
public abstract class CoroutineRuntime implements Scheduler {

    static final int NEW = 0;
    static final int RUNNING = 1;
    static final int STOPPING = 2;
    static final int STOPPED = 3;
    private static final SchedulerStats.State[] STATES = {
        SchedulerStats.State.NEW,
        SchedulerStats.State.RUNNING,
        SchedulerStats.State.STOPPING,
        SchedulerStats.State.STOPPED
    };

    private static final VarHandle STATE = VarHandles.field(MethodHandles.lookup(), "state", int.class);

    static final System.Logger LOG = System.getLogger("io.cosched");

    final String name;
    final CoroutineThreads coroutineThreads;
    final boolean carrierMode;
    private final long stallThresholdNanos;
    private final long stallWarmUpLimitNanos;
    private final Ticker ticker;
    private final @Nullable Set<CoroutineImpl<?>> tracked; // null unless tracking was asked for
    private final ScopeHook scopeHook;
    final RunTarget orphanTarget;
    private volatile int state = NEW;
    private volatile @Nullable StallWatchdog watchdog;

    final RuntimeCounters counters = new RuntimeCounters();

    /** @param ticker the clock of the watchdog (and of an IOManager's timers and loop chooser) */
    CoroutineRuntime(RuntimeSettings settings, Ticker ticker) {
        this.ticker = ticker;
        this.name = settings.name();
        this.coroutineThreads = CoroutineThreads.get();
        this.carrierMode = coroutineThreads.isCarrierMode();
        this.stallThresholdNanos = settings.stallThresholdNanos();
        this.stallWarmUpLimitNanos = settings.stallWarmUpLimitNanos();
        this.tracked = settings.trackCoroutines() ? ConcurrentHashMap.newKeySet() : null;
        this.scopeHook = settings.scopeHook();
        this.orphanTarget = new OrphanTarget(coroutineThreads.orphanExecutor());
        if (settings.requireCarrierMode() && !carrierMode) {
            throw new CarrierModeUnavailableException("scheduler '" + name + "' requires carrier mode "
                    + "(requireCarrierMode=true), but coroutines cannot run on cosched's carriers: "
                    + coroutineThreads.unavailableReason() + ". Start the JVM with " + CoroutineThreads.ADD_OPENS_FLAG
                    + ".");
        }
    }

    @Override
    public final String name() {
        return name;
    }

    /** What task scopes opened on this scheduler's coroutines add; see {@link ScopeHook}. */
    public final ScopeHook scopeHook() {
        return scopeHook;
    }

    /** A task scope of a coroutine of this scheduler forked a subtask. */
    public final void forkStarted() {
        counters.forkStarted();
    }

    /** A subtask counted by {@link #forkStarted()} ended: it failed, or was cancelled (a cancelled one may have failed too). */
    public final void forkEnded(boolean failed, boolean cancelled) {
        counters.forkEnded(failed, cancelled);
    }

    final int lifecycle() {
        return state;
    }

    final String stateName() {
        return STATES[state].name();
    }

    /**
     * NEW, RUNNING, STOPPING, STOPPED, or FAILED when the scheduler should be running but a carrier
     * thread has died (an Error escaped it, or someone shut its loop down).
     */
    @Override
    public final SchedulerStats.State state() {
        int s = state;
        if (s == RUNNING) {
            for (Carrier c : carrierArray()) {
                Thread t = c.thread();
                if (t != null && t.getState() == Thread.State.TERMINATED || c.hasFailed()) {
                    return SchedulerStats.State.FAILED;
                }
            }
        }
        return STATES[s];
    }

    @Override
    public final int threads() {
        return carrierArray().length;
    }

    @Override
    public final boolean isCarrierMode() {
        return carrierMode;
    }

    /** NEW to RUNNING; false when already started. Throws when stopped. */
    protected final boolean markStarted() {
        if (STATE.compareAndSet(this, NEW, RUNNING)) {
            return true;
        }
        if (state >= STOPPING) {
            throw new IllegalStateException("scheduler '" + name + "' is " + stateName() + " and cannot be restarted");
        }
        return false;
    }

    /** RUNNING (or NEW) to STOPPING; false when a stop already began. */
    protected final boolean markStopping() {
        for (; ; ) {
            int s = state;
            if (s >= STOPPING) {
                return false;
            }
            if (STATE.compareAndSet(this, s, STOPPING)) {
                return true;
            }
        }
    }

    /** Starts the stall watchdog, once the carriers exist; after {@link #markStarted}. */
    protected final void startWatchdog() {
        if (stallThresholdNanos > 0) {
            StallWatchdog w = new StallWatchdog(
                    this,
                    carrierArray(),
                    stallThresholdNanos,
                    stallWarmUpLimitNanos,
                    ticker,
                    ThreadTimes.SYSTEM,
                    WarmUpSignals.SYSTEM,
                    StallWatchdog.HICCUP);
            watchdog = w;
            w.start();
        }
    }

    /**
     * Installs a watchdog driven by {@code ticker} and nobody else; tests call {@code check} themselves.
     * It sees every carrier burn CPU the whole time it looks, unless given other {@code times}.
     */
    StallWatchdog manualWatchdog(long thresholdNanos, Ticker ticker) {
        return manualWatchdog(thresholdNanos, ticker, ThreadTimes.burning(ticker), Long.MAX_VALUE);
    }

    /** With the carriers' thread times from {@code times}, distrusting gaps between looks over {@code hiccupNanos}. */
    StallWatchdog manualWatchdog(long thresholdNanos, Ticker ticker, ThreadTimes times, long hiccupNanos) {
        return manualWatchdog(thresholdNanos, 0, ticker, times, WarmUpSignals.NONE, hiccupNanos);
    }

    /** With a warm-up limit of {@code warmUpLimitNanos}, and what the JVM says of its warming up from {@code warmth}. */
    StallWatchdog manualWatchdog(
            long thresholdNanos,
            long warmUpLimitNanos,
            Ticker ticker,
            ThreadTimes times,
            WarmUpSignals warmth,
            long hiccupNanos) {
        StallWatchdog w = new StallWatchdog(
                this, carrierArray(), thresholdNanos, warmUpLimitNanos, ticker, times, warmth, hiccupNanos);
        watchdog = w;
        return w;
    }

    /** The stall watchdog, or {@code null} without one; for tests. */
    final @Nullable StallWatchdog watchdog() {
        return watchdog;
    }

    /** Wakes the watchdog when it rests (every carrier was idle): a carrier has work again. Cheap otherwise. */
    final void wakeRestingWatchdog() {
        StallWatchdog w = watchdog;
        if (w != null && w.isResting()) {
            w.nudge();
        }
    }

    /** Makes the watchdog look now: something changed on a stalled carrier. */
    final void nudgeWatchdog() {
        StallWatchdog w = watchdog;
        if (w != null) {
            w.nudge();
        }
    }

    protected final void markStopped() {
        state = STOPPED;
        counters.signalDrainWaiters();
    }

    // ---- coroutines ----------------------------------------------------------------------------

    @Override
    public final <T> Coroutine<T> spawn(Callable<T> task) {
        return spawn(task, place(), false);
    }

    @Override
    public final Coroutine<Void> spawn(Runnable task) {
        return spawn(task, place(), false);
    }

    @Override
    public final <T> Coroutine<T> spawnOn(int index, Callable<T> task) {
        return spawn(task, carrier(index), false);
    }

    @Override
    public final void execute(Runnable task) {
        spawn(task, place(), true);
    }

    /** Starts {@code task} (a Callable or Runnable) as a coroutine homed on {@code home}. */
    final <T> CoroutineImpl<T> spawn(Object task, RunTarget home, boolean detached) {
        if (task == null) {
            throw new NullPointerException("task: null (expected: a task to run)");
        }
        // Count first, then check: a stop that begins after this check sees the coroutine as live.
        counters.spawned();
        home.coroutineStarted();
        if (state != RUNNING) {
            counters.finished();
            home.coroutineFinished();
            throw rejected();
        }
        CoroutineImpl<T> co = new CoroutineImpl<>(this, home, task, detached);
        if (tracked != null) {
            tracked.add(co);
        }
        if (!carrierMode) {
            counters.fallbackCreated();
        }
        Thread thread = coroutineThreads.newThread(co, co);
        co.thread = thread;
        thread.start();
        return co;
    }

    /** Where a coroutine started by code of this scheduler goes (the caller's own carrier when it has one). */
    public abstract RunTarget place();

    /** Carrier {@code index} as a run target, checked against the number of carriers. */
    public abstract RunTarget carrier(int index);

    /** Every carrier, in index order. */
    abstract Carrier[] carrierArray();

    /** {@code index} when it names a carrier (called {@code noun} in the message), else a clear error. */
    final int checkIndex(int index, String noun) {
        int n = carrierArray().length;
        if (index < 0 || index >= n) {
            throw new IllegalArgumentException("carrier: " + index + " (expected: 0.." + (n - 1) + "; " + kind() + " '"
                    + name + "' has " + n + " " + noun + ")");
        }
        return index;
    }

    /**
     * Where work queued for the stalled carrier {@code from} goes instead: another carrier of this
     * scheduler that is not stalled, else the JDK's default scheduler.
     */
    abstract RunTarget spillTarget(Carrier from);

    /**
     * The live coroutines, when the scheduler was built to track them.
     *
     * @throws IllegalStateException when tracking is off
     */
    @Override
    public final List<Coroutine<?>> coroutines() {
        if (tracked == null) {
            throw new IllegalStateException("coroutines(): scheduler '" + name + "' does not track its coroutines "
                    + "(build it with trackCoroutines(true))");
        }
        return List.copyOf(tracked);
    }

    /** Starts {@code task} next to the caller: {@link io.cosched.Coroutines#go} from inside this scheduler. */
    public final CoroutineImpl<Void> spawnLocal(Runnable task) {
        return spawn(task, place(), false);
    }

    void coroutineFinished(CoroutineImpl<?> co) {
        if (tracked != null) {
            tracked.remove(co);
        }
        counters.finished();
        co.home.coroutineFinished();
        if (state >= STOPPING && liveCoroutines() == 0) {
            counters.signalDrainWaiters();
            drained();
        }
    }

    /** Called when the last live coroutine finished during a stop. */
    void drained() {}

    /** Coroutines started and not finished. */
    public final long liveCoroutines() {
        return counters.live();
    }

    /** Logs what a stop that timed out leaves behind, and where it goes on running. */
    private void reportUndrained(java.time.Duration timeout) {
        SchedulerStats s = stats();
        LOG.log(
                System.Logger.Level.WARNING,
                "{0} ''{1}'' stop timed out after {2}: {3} coroutines still live "
                        + "(ready={4}, running={5}, waiting={6}, sleeping={7}); they go on running on the JDK''s default "
                        + "virtual-thread scheduler",
                kind(),
                name,
                timeout,
                s.coroutines(),
                s.ready(),
                s.running(),
                s.waiting(),
                s.sleeping());
    }

    /** Whether the calling code runs in a coroutine (or a thread it started) or on a carrier of this scheduler. */
    @Override
    public final boolean isCurrent() {
        CoroutineImpl<?> ctx = CoroutineImpl.currentContext();
        if (ctx != null) {
            return ctx.scheduler == this;
        }
        Carrier carrier = Carrier.ofCurrentThread();
        return carrier != null && ownsCarrier(carrier);
    }

    /**
     * The start of a stop that someone else already began: at once when stopped, else waits for the
     * drain like the first caller.
     */
    private boolean joinStop(long deadlineNanos) {
        return state == STOPPED ? liveCoroutines() == 0 : counters.awaitNoneLive(deadlineNanos);
    }

    /**
     * Stops: refuses new coroutines, waits up to {@code timeout} for the live ones ({@link #drain}),
     * then shuts the carriers down and hands what is left to the JDK's default scheduler
     * ({@link #shutDownCarriers}).
     *
     * @return whether every coroutine finished in time
     */
    @Override
    public boolean stop(java.time.Duration timeout) {
        long timeoutNanos = Durations.toNanos("timeout", timeout, false);
        checkNotInside("stop()");
        long deadline = System.nanoTime() + timeoutNanos;
        if (!markStopping()) {
            return joinStop(deadline); // stopped already, or another thread is stopping it
        }
        boolean drained = drain(deadline);
        if (!drained) {
            reportUndrained(timeout);
        }
        shutDownCarriers();
        StallWatchdog w = watchdog;
        if (w != null) {
            w.stop();
        }
        markStopped();
        return drained;
    }

    /** Waits until no coroutine is live or the deadline passes; returns whether none is live. */
    protected boolean drain(long deadlineNanos) {
        return counters.awaitNoneLive(deadlineNanos);
    }

    /** After the drain: stops the carriers and hands queued work to the JDK's default scheduler. */
    protected abstract void shutDownCarriers();

    /** "IOManager" or "PoolScheduler", for log messages. */
    protected abstract String kind();

    /** Throws when the calling code runs on this scheduler, which could then never finish draining. */
    protected final void checkNotInside(String operation) {
        if (isCurrent()) {
            throw new IllegalStateException(operation + " called from inside scheduler '" + name
                    + "', which cannot wait for itself; call it from another thread");
        }
    }

    protected abstract boolean ownsCarrier(Carrier carrier);

    public final RejectedExecutionException rejected() {
        String why = state == NEW ? "NEW (call start() first)" : stateName() + " (it accepts no new coroutines)";
        return new RejectedExecutionException("scheduler '" + name + "' is " + why);
    }

    RejectedExecutionException rejectedTimer() {
        return new RejectedExecutionException(
                "scheduler '" + name + "' is " + stateName() + ": its event loops have stopped and take no new timers");
    }

    // ---- stats ---------------------------------------------------------------------------------

    /** Work queued outside the carriers' own queues (a pool's shared queue), or {@code null}. */
    @Nullable
    RunQueue sharedRunQueue() {
        return null;
    }

    /** Timers that will still fire. */
    protected abstract long timersPending();

    abstract SchedulerStats.Type type();

    @Override
    public final SchedulerStats stats() {
        return counters.stats(this, watchdog);
    }

    /** One entry per carrier, in index order. */
    @Override
    public final List<CarrierStats> carrierStats() {
        return RuntimeCounters.carrierStats(carrierArray());
    }

    @Override
    public String toString() {
        return getClass().getSimpleName() + "[" + name + ", " + stateName() + "]";
    }
}
