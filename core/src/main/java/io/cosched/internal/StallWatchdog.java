package io.cosched.internal;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;
import org.jspecify.annotations.Nullable;

/**
 * Notices a carrier stuck in one task past the threshold, marks it stalled so that its queued and
 * future continuations spill elsewhere and its due timers fire elsewhere, and marks it recovered
 * once it moves again.
 *
 * <p>The carriers pay one release store per task ({@link Carrier#advance}); everything else
 * happens here, on a daemon thread that looks every eighth of a threshold, and exactly when a
 * suspect carrier would cross the threshold or a stalled loop's timer falls due. A carrier is a
 * suspect when its progress count has not moved since the last look and either it is inside a task
 * of ours, or (an event loop) it has not answered a ping, which catches a loop blocked in plain Netty
 * or reactive code too. A loop waiting in its poll (epoll_wait; {@link PollWatch} tells) and a pool's
 * carrier parked for want of work are idle: neither pinged nor suspects. Once every carrier has been
 * idle for two looks in a row with no task in between, the watchdog rests until the first of them has
 * work again, so an idle scheduler costs no wake-ups.
 *
 * <p>A suspect a threshold old is judged by where its thread's time went (see {@link ThreadTimes}):
 * <ul>
 *   <li>it ran on a CPU for at least half the time watched, or half a threshold on a CPU it shares:
 *       <b>stuck</b> in a task that burns CPU;</li>
 *   <li>it waits on a lock or in a blocking call (thread state, or off CPU without waiting for one):
 *       <b>blocked</b>;</li>
 *   <li>it was runnable but mostly waiting for a CPU: <b>starved</b>. The OS did not run it (an
 *       overloaded host, a CPU-throttled container); that is not a stall. Counted, logged at most
 *       once a minute, and nothing spills.</li>
 * </ul>
 * Stuck and blocked are stalls: reported once with the stack, counted, and the carrier's work moves
 * elsewhere. The watchdog also distrusts its own eyes: when it did not get to look for a while (a
 * GC pause stops every thread, or it was starved itself), the time it missed counts for nobody.
 */
final class StallWatchdog implements Runnable {

    /** Derive the gap after which the watchdog distrusts what it missed from the threshold. */
    static final long HICCUP = -1;

    private static final System.Logger LOG = System.getLogger("io.cosched");
    private static final int STACK_FRAMES = 40;
    private static final long NONE = Long.MAX_VALUE;
    private static final long STARVATION_LOG_EVERY = TimeUnit.MINUTES.toNanos(1);
    // Looks in a row with every carrier idle before the watchdog rests: a loop that serves requests
    // moves between looks, so a busy service keeps its watchdog looking instead of waking it per request.
    private static final int QUIET_LOOKS = 2;

    private enum Verdict {
        STUCK,
        BLOCKED,
        STARVED
    }

    private final CoroutineRuntime owner;
    private final Carrier[] carriers;
    private final long thresholdNanos;
    private final long periodNanos;
    private final long hiccupNanos;
    private final Ticker ticker;
    private final ThreadTimes times;
    private final LongAdder stalls = new LongAdder();
    private final LongAdder warmUpStalls = new LongAdder();
    private final LongAdder starvations = new LongAdder();
    private final long startedAt; // when watching began: the warm-up runs from here
    private final long warmUpNanos; // how long stalls count as warm-up whatever their stack; 0: only class loading does

    // Per carrier, confined to check() (synchronized): the last progress count seen and when it was
    // first seen, whether a ping is out since then and when it went out, where the suspect's thread
    // times stood when it became one, whether this episode was counted as starvation, when a stall
    // began.
    private final long[] seen;
    private final long[] seenAt;
    private final boolean[] pinged;
    private final long[] pingedAt;
    private final long[] baseAt;
    private final ThreadTimes.Sample[] base;
    private final boolean[] starved;
    private final long[] stuckSince;
    private final boolean[] warmingUp; // this carrier's stall is a warm-up one: one line in, nothing out
    private long lastLook = NONE;
    private long lastStarvationLog = NONE;
    private long starvationsAtLastLog;

    private int quietLooks; // looks in a row that found every carrier idle, none moved since the last
    private volatile boolean resting; // parked until a carrier has work again

    private volatile boolean stopped;
    private @Nullable Thread thread;

    StallWatchdog(
            CoroutineRuntime owner,
            Carrier[] carriers,
            long thresholdNanos,
            long warmUpNanos,
            Ticker ticker,
            ThreadTimes times,
            long hiccupNanos) {
        this.owner = owner;
        this.warmUpNanos = warmUpNanos;
        this.carriers = carriers;
        this.thresholdNanos = thresholdNanos;
        this.periodNanos =
                Math.max(TimeUnit.MILLISECONDS.toNanos(1), Math.min(thresholdNanos / 8, TimeUnit.SECONDS.toNanos(1)));
        // Two missed looks plus the scheduling noise of a busy machine.
        this.hiccupNanos = hiccupNanos == HICCUP ? 2 * periodNanos + TimeUnit.MILLISECONDS.toNanos(10) : hiccupNanos;
        this.ticker = ticker;
        this.times = times;
        int n = carriers.length;
        this.seen = new long[n];
        this.seenAt = new long[n];
        this.pinged = new boolean[n];
        this.pingedAt = new long[n];
        this.baseAt = new long[n];
        this.base = new ThreadTimes.Sample[n];
        this.starved = new boolean[n];
        this.stuckSince = new long[n];
        this.warmingUp = new boolean[n];
        long now = ticker.nanoTime();
        this.startedAt = now;
        for (int i = 0; i < n; i++) {
            seen[i] = carriers[i].progress();
            seenAt[i] = now;
            baseAt[i] = NONE;
        }
    }

    /** Stalls detected since start, warm-up ones not counted. */
    long stalls() {
        return stalls.sum();
    }

    /** Stalls while the JVM warmed up: in the warm-up period after start, or loading classes. */
    long warmUpStalls() {
        return warmUpStalls.sum();
    }

    /** Times a carrier sat a threshold in one task because it got no CPU, since start. */
    long starvations() {
        return starvations.sum();
    }

    synchronized void start() {
        if (thread == null && !stopped) {
            thread = Thread.ofPlatform()
                    .daemon()
                    .name("cosched-watchdog-" + owner.name())
                    .start(this);
        }
    }

    /** Stops watching and clears every stall flag, so that nothing spills any more. */
    void stop() {
        stopped = true;
        Thread t;
        synchronized (this) {
            t = thread;
            for (Carrier c : carriers) {
                c.stalled = false;
            }
        }
        if (t != null) {
            LockSupport.unpark(t);
        }
    }

    /** Look now rather than at the planned time. */
    void nudge() {
        Thread t = thread;
        if (t != null) {
            LockSupport.unpark(t);
        }
    }

    /** Whether the watchdog rests: every carrier was idle, and the first to have work again wakes it. */
    boolean isResting() {
        return resting;
    }

    @Override
    public void run() {
        while (!stopped) {
            long next = check(ticker.nanoTime());
            if (mayRest() && rest()) {
                continue;
            }
            long wait = next - ticker.nanoTime();
            if (wait > 0) {
                LockSupport.parkNanos(this, wait);
            }
        }
    }

    private synchronized boolean mayRest() {
        return quietLooks >= QUIET_LOOKS;
    }

    /**
     * Parks until a carrier has work again (or the watchdog stops): nothing can get stuck while every carrier
     * waits for work. The carrier clears its idle state, then reads {@link #resting}; the watchdog sets
     * {@link #resting}, then reads the flags: whichever comes second sees the other, so no wake-up is lost.
     *
     * @return whether it rested; not when a carrier had work already
     */
    private boolean rest() {
        resting = true;
        for (Carrier c : carriers) {
            if (serving(c) && !c.waitsForWork()) {
                resting = false;
                return false;
            }
        }
        if (!stopped) {
            LockSupport.park(this);
        }
        resting = false;
        return true;
    }

    private static boolean serving(Carrier c) {
        Thread t = c.thread();
        return t != null && t.getState() != Thread.State.TERMINATED && !c.hasFailed();
    }

    /**
     * One look at every carrier at time {@code now}.
     *
     * @return when to look next
     */
    synchronized long check(long now) {
        if (stopped) {
            return now + periodNanos;
        }
        if (lastLook != NONE && now - lastLook > hiccupNanos) {
            restartWindows(now); // nobody looked in between: no carrier was seen stuck all that time
        }
        lastLook = now;
        long next = now + periodNanos;
        boolean quiet = true;
        for (int i = 0; i < carriers.length; i++) {
            Carrier c = carriers[i];
            if (!serving(c)) {
                continue; // a caller carrier nobody runs, or a carrier that died (the state says FAILED)
            }
            c.inOneTaskFor(0, now); // a look for the loop choosers too
            long p = c.progress();
            boolean moved = p != seen[i];
            if (moved || c.waitsForWork()) {
                // moved, or idle waiting for work (no ping needed: it has nothing to answer with but the wake-up)
                quiet &= !moved;
                seen[i] = p;
                seenAt[i] = now;
                pinged[i] = false;
                baseAt[i] = NONE;
                starved[i] = false;
                if (c.stalled) {
                    recovered(i, c, now - stuckSince[i]);
                }
                continue;
            }
            quiet = false;
            if (c.stalled) {
                next = Math.min(next, c.rescueTimers(now));
                // Reported once. Out of its task but no new one: a loop must first answer a ping; a
                // carrier that cannot be pinged is idle, so it has recovered.
                if (!c.isBusy() && !pinged[i]) {
                    pinged[i] = c.ping();
                    pingedAt[i] = now;
                    if (!pinged[i]) {
                        recovered(i, c, now - stuckSince[i]);
                    }
                }
                continue;
            }
            long since;
            if (c.isBusy()) {
                since = seenAt[i];
            } else if (!pinged[i]) {
                pinged[i] = c.ping();
                pingedAt[i] = now;
                continue;
            } else {
                since = pingedAt[i];
            }
            if (baseAt[i] == NONE) {
                baseAt[i] = now;
                base[i] = times.sample(c);
            }
            if (now - since < thresholdNanos) {
                next = Math.min(next, since + thresholdNanos);
                continue;
            }
            Verdict v = judge(i, c, now);
            if (v == Verdict.STARVED) {
                if (!starved[i]) {
                    starved[i] = true;
                    starved(c, now - since);
                }
                continue; // still watched: should it start burning CPU, it is stuck after all
            }
            stuckSince[i] = since;
            stalled(i, c, since, now, v);
            next = Math.min(next, c.rescueTimers(now));
        }
        quietLooks = quiet ? quietLooks + 1 : 0;
        return next;
    }

    private void restartWindows(long now) {
        for (int i = 0; i < carriers.length; i++) {
            seenAt[i] = now;
            if (pinged[i]) {
                pingedAt[i] = now;
            }
            baseAt[i] = NONE;
        }
    }

    /** Where the suspect's time went since it became one (one sample of its thread's times). */
    private Verdict judge(int i, Carrier c, long now) {
        ThreadTimes.Sample then = base[i];
        ThreadTimes.Sample sample = times.sample(c);
        if (sample.cpuNanos() == ThreadTimes.UNKNOWN || then.cpuNanos() == ThreadTimes.UNKNOWN) {
            return Verdict.STUCK; // cannot tell: take it at its word
        }
        long used = sample.cpuNanos() - then.cpuNanos();
        long window = now - baseAt[i];
        if (2 * used >= window || 2 * used >= thresholdNanos) {
            return Verdict.STUCK; // ran most of the time watched, or half a threshold on a CPU shared with others
        }
        if (waitsOnPurpose(c)) {
            return Verdict.BLOCKED;
        }
        if (sample.runQueueNanos() != ThreadTimes.UNKNOWN
                && then.runQueueNanos() != ThreadTimes.UNKNOWN
                && 2 * (sample.runQueueNanos() - then.runQueueNanos()) < window - used) {
            return Verdict.BLOCKED; // off CPU, not waiting for one: a blocking call in native code
        }
        return Verdict.STARVED;
    }

    /** Whether the code the carrier runs is parked or waiting for a monitor (a pinned coroutine, a lock). */
    private static boolean waitsOnPurpose(Carrier c) {
        Thread t = c.currentTask() instanceof CoroutineImpl<?> co ? co.thread() : c.thread();
        Thread.State s = t == null ? Thread.State.RUNNABLE : t.getState();
        return s == Thread.State.BLOCKED || s == Thread.State.WAITING || s == Thread.State.TIMED_WAITING;
    }

    private void stalled(int i, Carrier c, long since, long now, Verdict v) {
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
        boolean loadingClasses = loadsClasses(stack);
        boolean warmUp = loadingClasses || now - startedAt < warmUpNanos;
        warmingUp[i] = warmUp;
        (warmUp ? warmUpStalls : stalls).increment(); // before the flag: who sees a stalled carrier sees it counted
        c.stalled = true;
        int spilled = c.spillQueued();
        JfrEvents.stall(
                owner.name(),
                c.threadName(),
                now - since,
                v == Verdict.BLOCKED,
                what,
                spilled,
                stack,
                STACK_FRAMES,
                warmUp);
        if (warmUp) {
            // the first requests of a fresh JVM load classes and run code the JIT has not compiled: expected, so one
            // line an operator can leave on, and a counter apart from the stalls that page someone
            LOG.log(
                    System.Logger.Level.INFO,
                    "{0} ''{1}'': carrier {2} was stuck for {3} ms (threshold {4} ms) in {5} "
                            + "while warming up ({6}); its work moved as for any stall. Counted in warmUpStalls, not stalls; "
                            + "a stall past the warm-up logs its stack.",
                    owner.kind(),
                    owner.name(),
                    c.threadName(),
                    millis(now - since),
                    millis(thresholdNanos),
                    what,
                    loadingClasses ? "loading classes" : "in the first " + warmUp(warmUpNanos) + " after start");
        } else if (LOG.isLoggable(System.Logger.Level.WARNING)) {
            StringBuilder sb = new StringBuilder();
            sb.append(owner.kind())
                    .append(" '")
                    .append(owner.name())
                    .append("': carrier ")
                    .append(c.threadName())
                    .append(" has been stuck for ")
                    .append(millis(now - since))
                    .append(" ms (threshold ")
                    .append(millis(thresholdNanos))
                    .append(" ms) in ")
                    .append(what)
                    .append(v == Verdict.BLOCKED ? ", blocked (waiting on a lock or in a blocking call)" : ", running")
                    .append("; ")
                    .append(spilled)
                    .append(" queued continuations spilled, and continuations and due timers for it go to other "
                            + "carriers until it moves again. Stack:");
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

    private void starved(Carrier c, long waitedNanos) {
        starvations.increment();
        long now = ticker.nanoTime();
        if (lastStarvationLog == NONE || now - lastStarvationLog >= STARVATION_LOG_EVERY) {
            long count = starvations.sum();
            LOG.log(
                    System.Logger.Level.INFO,
                    "{0} ''{1}'': carrier {2} sat {3} ms in one task mostly waiting for a "
                            + "CPU: the host or container is short of CPU. Not a stall, nothing moved; {4} such waits since the "
                            + "last line like this (meter cosched.starvations).",
                    owner.kind(),
                    owner.name(),
                    c.threadName(),
                    millis(waitedNanos),
                    count - starvationsAtLastLog);
            lastStarvationLog = now;
            starvationsAtLastLog = count;
        }
    }

    /**
     * Whether the stuck code is loading or initialising classes (a class loader, a static initialiser, a lambda or
     * method handle being spun): what the first use of a code path costs, once.
     */
    static boolean loadsClasses(StackTraceElement[] stack) {
        for (StackTraceElement f : stack) {
            String type = f.getClassName();
            String method = f.getMethodName();
            if (method.equals("<clinit>")
                    || type.equals("java.lang.ClassLoader")
                            && (method.startsWith("loadClass") || method.startsWith("defineClass"))
                    || type.startsWith("jdk.internal.loader.")
                    || type.equals("java.lang.Class") && method.startsWith("forName")
                    || type.startsWith("java.lang.invoke.InnerClassLambdaMetafactory")
                    || type.startsWith("java.lang.invoke.InvokerBytecodeGenerator")) {
                return true;
            }
        }
        return false;
    }

    private void recovered(int i, Carrier c, long stuckNanos) {
        c.stalled = false;
        JfrEvents.stallEnded(owner.name(), c.threadName(), stuckNanos);
        if (warmingUp[i]) {
            warmingUp[i] = false;
            return; // its one line was the warm-up line
        }
        LOG.log(
                System.Logger.Level.INFO,
                "{0} ''{1}'': carrier {2} moves again after being stuck for about {3} ms",
                owner.kind(),
                owner.name(),
                c.threadName(),
                millis(stuckNanos));
    }

    /** The warm-up period as a person writes it: whole seconds in seconds, anything else in milliseconds. */
    private static String warmUp(long nanos) {
        long second = TimeUnit.SECONDS.toNanos(1);
        return nanos % second == 0 ? nanos / second + " s" : millis(nanos) + " ms";
    }

    private static long millis(long nanos) {
        return TimeUnit.NANOSECONDS.toMillis(nanos);
    }
}
