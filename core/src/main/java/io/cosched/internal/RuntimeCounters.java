package io.cosched.internal;

import io.cosched.CarrierStats;
import io.cosched.SchedulerStats;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import org.jspecify.annotations.Nullable;

/**
 * A runtime's coroutine counters, the {@link SchedulerStats} and {@link CarrierStats} made from them
 * and from its carriers, and the wait of a stop for the live coroutines to finish.
 *
 * <p>Counters are {@link LongAdder}s: submitters on many threads update them without contending,
 * a reader sums a few cells. Live coroutines are {@code spawned - finished}, read in the order
 * that can only over-count, so a stop never sees zero while one is live.
 */
final class RuntimeCounters {

    private final LongAdder spawned = new LongAdder();
    private final LongAdder finished = new LongAdder();
    private final LongAdder sleeping = new LongAdder();
    private final LongAdder fallbackWaiting = new LongAdder();
    private final LongAdder fallbackNotStarted = new LongAdder();
    private final LongAdder forks = new LongAdder();
    private final LongAdder forksFailed = new LongAdder();
    private final LongAdder forksCancelled = new LongAdder();
    private final Object drainMonitor = new Object();

    /** A coroutine is about to be created; one that is then refused counts as {@link #finished}. */
    void spawned() {
        spawned.increment();
    }

    void finished() {
        finished.increment();
    }

    /** A fallback-mode coroutine was created; it counts as ready until {@link #fallbackStarted}. */
    void fallbackCreated() {
        fallbackNotStarted.increment();
    }

    void fallbackStarted() {
        fallbackNotStarted.decrement();
    }

    void sleepingAdd(int delta) {
        sleeping.add(delta);
    }

    void fallbackWaitingAdd(int delta) {
        fallbackWaiting.add(delta);
    }

    void forkStarted() {
        forks.increment();
    }

    void forkEnded(boolean failed, boolean cancelled) {
        if (cancelled) {
            forksCancelled.increment(); // a cancelled subtask's failure (its InterruptedException) is the cancel's
        } else if (failed) {
            forksFailed.increment();
        }
    }

    /** Coroutines started and not finished. */
    long live() {
        long done = finished.sum(); // before spawned: a coroutine counted here was spawned earlier
        return spawned.sum() - done;
    }

    long completed() {
        return finished.sum();
    }

    /** Wakes whoever waits in {@link #awaitNoneLive}, to look again. */
    void signalDrainWaiters() {
        synchronized (drainMonitor) {
            drainMonitor.notifyAll();
        }
    }

    /**
     * Waits until no coroutine is live or {@code deadlineNanos} passes; an interrupt ends the wait,
     * keeping the flag set.
     *
     * @return whether none is live
     */
    boolean awaitNoneLive(long deadlineNanos) {
        synchronized (drainMonitor) {
            for (; ; ) {
                if (live() == 0) {
                    return true;
                }
                long remaining = deadlineNanos - System.nanoTime();
                if (remaining <= 0) {
                    return false;
                }
                try {
                    TimeUnit.NANOSECONDS.timedWait(drainMonitor, remaining);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return live() == 0;
                }
            }
        }
    }

    /** The numbers of {@code runtime}: its carriers' states summed, and these counters. */
    SchedulerStats stats(CoroutineRuntime runtime, @Nullable StallWatchdog watchdog) {
        int threads = 0;
        int active = 0;
        int stalled = 0;
        long running = 0;
        RunQueue shared = runtime.sharedRunQueue();
        long queue = shared == null ? 0 : shared.depth();
        long readySteps = shared == null ? 0 : shared.readySteps();
        long localWakeups = 0;
        long remoteWakeups = 0;
        long monitorWakeups = 0;
        for (Carrier c : runtime.carrierArray()) {
            threads++;
            localWakeups += c.localWakeups();
            remoteWakeups += c.remoteWakeups();
            monitorWakeups += c.monitorWakeups();
            if (c.isBusy()) {
                active++;
            }
            if (c.isRunningCoroutine()) {
                running++;
            }
            if (c.isStalled()) {
                stalled++;
            }
            queue += c.queueDepth();
            readySteps += c.readySteps();
        }
        long live = live();
        long sleepingNow = Math.max(0, sleeping.sum());
        long ready;
        long waiting;
        if (runtime.carrierMode) {
            ready = readySteps;
            waiting = live - ready - running - sleepingNow;
        } else {
            // No carrier sees the parks of a fallback coroutine: helper waits are counted, and a
            // coroutine blocked in a plain JDK call counts as running.
            ready = Math.max(0, fallbackNotStarted.sum());
            waiting = Math.max(0, fallbackWaiting.sum());
            running = live - ready - waiting - sleepingNow;
        }
        // While busy the sums are read at slightly different instants; keep the parts consistent.
        ready = clamp(ready, live);
        running = clamp(running, live - ready);
        sleepingNow = clamp(sleepingNow, live - ready - running);
        waiting = clamp(waiting, live - ready - running - sleepingNow);
        return new SchedulerStats(
                runtime.name,
                runtime.type(),
                runtime.carrierMode ? SchedulerStats.Mode.CARRIER : SchedulerStats.Mode.FALLBACK,
                threads,
                active,
                threads - active,
                Math.max(0, queue),
                Math.max(0, live),
                ready,
                running,
                waiting,
                sleepingNow,
                runtime.timersPending(),
                finished.sum(),
                localWakeups,
                remoteWakeups,
                monitorWakeups,
                watchdog == null ? 0 : watchdog.stalls(),
                watchdog == null ? 0 : watchdog.warmUpStalls(),
                watchdog == null ? 0 : watchdog.starvations(),
                stalled,
                forks.sum(),
                forksFailed.sum(),
                forksCancelled.sum(),
                runtime.state());
    }

    /** One entry per carrier, in index order. */
    static List<CarrierStats> carrierStats(Carrier[] carriers) {
        List<CarrierStats> out = new ArrayList<>(carriers.length);
        for (Carrier c : carriers) {
            out.add(new CarrierStats(
                    c.index(),
                    c.threadName(),
                    c.state(),
                    Math.max(0, c.queueDepth()),
                    Math.max(0, c.liveCoroutines()),
                    c.localWakeups(),
                    c.remoteWakeups(),
                    c.monitorWakeups()));
        }
        return out;
    }

    private static long clamp(long v, long max) {
        return Math.max(0, Math.min(v, Math.max(0, max)));
    }
}
