package io.cosched.internal;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;

/**
 * Notices a carrier stuck in one task past the threshold, marks it stalled so that its queued and
 * future continuations spill elsewhere, and marks it recovered once it moves again.
 *
 * <p>The carriers pay one release store per task ({@link CarrierBase#advance}); everything else
 * happens here, on a daemon thread that looks every quarter threshold. A carrier is stuck when
 * its progress count has not moved for a threshold and either it is inside a task of ours, or
 * (an event loop) it has not answered a ping sent a threshold ago, which catches a loop blocked in
 * plain Netty or reactive code too. An idle loop answers pings at once, so it costs a wake-up per
 * half threshold and is never reported.
 */
final class StallWatchdog implements Runnable {

    private static final System.Logger LOG = System.getLogger("io.cosched");
    private static final int STACK_FRAMES = 40;

    private final SchedulerCore owner;
    private final CarrierBase[] carriers;
    private final long thresholdNanos;
    private final long periodNanos;
    private final Ticker ticker;
    private final LongAdder stalls = new LongAdder();

    // Per carrier, confined to check() (synchronized): the last progress count seen and when it was
    // first seen, whether a ping is out since then and when it went out, and when a stall began.
    private final long[] seen;
    private final long[] seenAt;
    private final boolean[] pinged;
    private final long[] pingedAt;
    private final long[] stuckSince;

    private volatile boolean stopped;
    private Thread thread;

    StallWatchdog(SchedulerCore owner, CarrierBase[] carriers, long thresholdNanos, Ticker ticker) {
        this.owner = owner;
        this.carriers = carriers;
        this.thresholdNanos = thresholdNanos;
        this.periodNanos = Math.max(TimeUnit.MILLISECONDS.toNanos(1), Math.min(thresholdNanos / 4, TimeUnit.SECONDS.toNanos(1)));
        this.ticker = ticker;
        int n = carriers.length;
        this.seen = new long[n];
        this.seenAt = new long[n];
        this.pinged = new boolean[n];
        this.pingedAt = new long[n];
        this.stuckSince = new long[n];
        long now = ticker.nanoTime();
        for (int i = 0; i < n; i++) {
            seen[i] = carriers[i].progress();
            seenAt[i] = now;
        }
    }

    /** Stalls detected since start. */
    long stalls() {
        return stalls.sum();
    }

    synchronized void start() {
        if (thread == null && !stopped) {
            thread = Thread.ofPlatform().daemon().name("cosched-watchdog-" + owner.name()).start(this);
        }
    }

    /** Stops watching and clears every stall flag, so that nothing spills any more. */
    void stop() {
        stopped = true;
        Thread t;
        synchronized (this) {
            t = thread;
            for (CarrierBase c : carriers) {
                c.stalled = false;
            }
        }
        if (t != null) {
            LockSupport.unpark(t);
        }
    }

    @Override
    public void run() {
        while (!stopped) {
            check(ticker.nanoTime());
            LockSupport.parkNanos(this, periodNanos);
        }
    }

    /** One look at every carrier at time {@code now}. */
    synchronized void check(long now) {
        if (stopped) {
            return;
        }
        for (int i = 0; i < carriers.length; i++) {
            CarrierBase c = carriers[i];
            Thread t = c.thread();
            if (t == null || t.getState() == Thread.State.TERMINATED || c.hasFailed()) {
                continue; // not serving: a caller carrier nobody runs, or a carrier that died (the state says FAILED)
            }
            long p = c.progress();
            if (p != seen[i]) {
                seen[i] = p;
                seenAt[i] = now;
                pinged[i] = false;
                if (c.stalled) {
                    recovered(c, now - stuckSince[i]);
                }
                continue;
            }
            if (c.stalled) {
                // Reported once. Out of its task but no new one: a loop must first answer a ping; a
                // carrier that cannot be pinged is idle, so it has recovered.
                if (!c.isBusy() && !pinged[i]) {
                    pinged[i] = c.ping();
                    pingedAt[i] = now;
                    if (!pinged[i]) {
                        recovered(c, now - stuckSince[i]);
                    }
                }
                continue;
            }
            if (c.isBusy()) {
                if (now - seenAt[i] >= thresholdNanos) {
                    stalled(c, seenAt[i], now);
                    stuckSince[i] = seenAt[i];
                }
            } else if (!pinged[i]) {
                pinged[i] = c.ping();
                pingedAt[i] = now;
            } else if (now - pingedAt[i] >= thresholdNanos) {
                stalled(c, pingedAt[i], now);
                stuckSince[i] = pingedAt[i];
            }
        }
    }

    private void stalled(CarrierBase c, long since, long now) {
        c.stalled = true;
        stalls.increment();
        Object task = c.currentTask();
        StackTraceElement[] stack; // taken before the spill, which may let the carrier move on
        String what;
        if (task instanceof CoroutineImpl<?> co) {
            what = "coroutine " + co.name();
            stack = co.thread().getStackTrace();
        } else {
            what = task != null ? "task " + task : "code outside cosched's tasks (a Netty handler or task on the loop)";
            Thread t = c.thread();
            stack = t != null ? t.getStackTrace() : new StackTraceElement[0];
        }
        int spilled = c.spillQueued();
        if (LOG.isLoggable(System.Logger.Level.WARNING)) {
            StringBuilder sb = new StringBuilder();
            sb.append(owner.kind()).append(" '").append(owner.name()).append("': carrier ").append(c.threadName())
                    .append(" has been stuck for ").append(millis(now - since)).append(" ms (threshold ")
                    .append(millis(thresholdNanos)).append(" ms) in ").append(what).append("; ").append(spilled)
                    .append(" queued continuations spilled, and continuations for it spill to other carriers until it "
                            + "moves again. Stack:");
            int frames = Math.min(stack.length, STACK_FRAMES);
            for (int k = 0; k < frames; k++) {
                sb.append("\n\tat ").append(stack[k]);
            }
            if (stack.length > frames) {
                sb.append("\n\t... ").append(stack.length - frames).append(" more");
            }
            LOG.log(System.Logger.Level.WARNING, sb.toString());
        }
    }

    private void recovered(CarrierBase c, long stuckNanos) {
        c.stalled = false;
        LOG.log(System.Logger.Level.INFO, "{0} ''{1}'': carrier {2} moves again after being stuck for about {3} ms",
                owner.kind(), owner.name(), c.threadName(), millis(stuckNanos));
    }

    private static long millis(long nanos) {
        return TimeUnit.NANOSECONDS.toMillis(nanos);
    }
}
