package io.cosched.internal;

import io.cosched.Timer;
import io.cosched.TimerManager;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicInteger;

/** An IOManager's timers: one {@link LoopTimers} per loop, chosen by who is asking. */
final class IOTimerManager implements TimerManager {

    private final IORuntime runtime;
    private final AtomicInteger roundRobin = new AtomicInteger();

    IOTimerManager(IORuntime runtime) {
        this.runtime = runtime;
    }

    @Override
    public Timer addTimer(Duration delay, Runnable task) {
        long nanos = Durations.toNanos("delay", delay, false);
        Objects.requireNonNull(task, "task: null (expected: a task to run)");
        return target().timers.add(nanos, false, task, null, null);
    }

    @Override
    public Timer addRecurringTimer(Duration period, Runnable task) {
        long nanos = Durations.toNanos("period", period, true);
        Objects.requireNonNull(task, "task: null (expected: a task to run)");
        return target().timers.add(nanos, true, task, null, null);
    }

    @Override
    public Timer addConditionTimer(Duration delay, Runnable task, Object condition) {
        long nanos = Durations.toNanos("delay", delay, false);
        Objects.requireNonNull(task, "task: null (expected: a task to run)");
        Objects.requireNonNull(condition, "condition: null (expected: the object whose reachability gates the task)");
        return target().timers.add(nanos, false, task, condition, null);
    }

    @Override
    public int pending() {
        int n = 0;
        for (LoopCarrier c : runtime.carriers()) {
            n += c.timersPending();
        }
        return n;
    }

    /** A wake-up timer on {@code loop} that unparks {@code thread}; for sleeping and timed waits. */
    TimerImpl wakeUp(LoopCarrier loop, long nanos, Thread thread) {
        checkAccepting();
        return loop.timers.add(nanos, false, null, null, thread);
    }

    private LoopCarrier target() {
        checkAccepting();
        LoopCarrier local = runtime.callersLoop();
        if (local != null) {
            return local;
        }
        LoopCarrier[] carriers = runtime.carriers();
        return carriers[Math.floorMod(roundRobin.getAndIncrement(), carriers.length)];
    }

    private void checkAccepting() {
        int s = runtime.lifecycle();
        if (s == CoroutineRuntime.NEW) {
            throw runtime.rejected();
        }
        if (s == CoroutineRuntime.STOPPED) {
            throw runtime.rejectedTimer();
        }
    }
}
