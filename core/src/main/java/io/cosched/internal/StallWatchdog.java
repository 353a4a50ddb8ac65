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
 *
 * <p>A stall may be the JVM warming up, by its cause, never by the clock: at the threshold the stuck code is
 * loading or initialising classes, the JVM loaded ten classes or more while it was watched (it may wait for another
 * thread's class initialisation), or the JIT spent at least a tenth of the time watched compiling (the stuck code
 * is likely one it has not compiled yet). Such a stall is judged when it ends: within the warm-up limit it was a
 * warm-up stall (one INFO line without the stack, counted in {@link #warmUpStalls()}); still stuck at the warm-up limit it
 * is a stall like any other, reported then with its stack. Its work moves at the threshold either way.
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
    // The JIT compiled for at least this share of the time a suspect was watched: the JVM is warming up.
    private static final int JIT_SHARE = 10;
    // The JVM loaded at least this many classes while a suspect was watched: the JVM is warming up (the suspect may
    // wait for another thread's class initialisation, with no class loader on its own stack).
    private static final int CLASSES_LOADED = 10;

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
    private final WarmUpSignals warmth;
    private final LongAdder stalls = new LongAdder();
    private final LongAdder warmUpStalls = new LongAdder();
    private final LongAdder starvations = new LongAdder();
    private final long warmUpLimitNanos; // the longest a stall may last and still be warm-up; 0: none is

    // Per carrier, confined to check() (synchronized): the last progress count seen and when it was
    // first seen, whether a ping is out since then and when it went out, where the suspect's thread
    // times, the JIT's compiling time and the JVM's loaded classes stood when it became one, whether this episode was
    // counted as
    // starvation, when a stall began, and for a stall that looked like warm-up at the threshold, what it
    // looked like and how it was found (reported when it ends or reaches the warm-up limit).
    private final long[] seen;
    private final long[] seenAt;
    private final boolean[] pinged;
    private final long[] pingedAt;
    private final long[] baseAt;
    private final ThreadTimes.Sample[] base;
    private final long[] baseJit;
    private final long[] baseClasses;
    private final boolean[] starved;
    private final long[] stuckSince;
    private final Found[] warmingUp; // a stall that looked like warm-up, not yet reported
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
            long warmUpLimitNanos,
            Ticker ticker,
            ThreadTimes times,
            WarmUpSignals warmth,
            long hiccupNanos) {
        this.owner = owner;
        this.warmUpLimitNanos = warmUpLimitNanos;
        this.warmth = warmth;
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
        this.baseJit = new long[n];
        this.baseClasses = new long[n];
        this.starved = new boolean[n];
        this.stuckSince = new long[n];
        this.warmingUp = new Found[n];
        long now = ticker.nanoTime();
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

    /**
     * Stalls of the JVM warming up: loading classes, or with the JVM loading classes or the JIT compiling, at the
     * threshold, and over within the warm-up limit; counted when they end.
     */
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

    /**
     * The watchdog's own thread: a look, then a timed park to the next look, or a rest. Its parks are not
     * {@link Waits#park}'s waits for a condition but the tick of a clock that tests drive ({@link Ticker}), on a
     * platform thread that must not depend on the loops it watches (a stalled loop's timers would never wake it).
     */
    @Override
    public void run() {
        if (warmUpLimitNanos > 0) {
            // the JVM's management beans load classes the first time they are asked: here, not in a suspect's window
            warmth.jitMillis();
            warmth.loadedClasses();
        }
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
                Found w = warmingUp[i];
                if (w != null) {
                    if (now - stuckSince[i] >= warmUpLimitNanos) {
                        warmingUp[i] = null; // stuck past the warm-up limit: no warm-up does that
                        stalls.increment();
                        Object task = c.currentTask(); // its stack now, unless it left its task (then the one seen)
                        reportStall(c, task == null ? w : w.withStack(stackOf(task, c)), now - stuckSince[i], true);
                    } else {
                        next = Math.min(next, stuckSince[i] + warmUpLimitNanos);
                    }
                }
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
                if (warmUpLimitNanos > 0) { // read only where a stall can be warm-up
                    baseJit[i] = warmth.jitMillis();
                    baseClasses[i] = warmth.loadedClasses();
                }
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
        if (sample.runnable()) {
            // off CPU but runnable: woken (a loop out of epoll_wait for the watchdog's own ping) and waiting for a
            // CPU, a wait the run queue's count takes in only once the thread runs
            return Verdict.STARVED;
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

    /** What the watchdog found at the threshold: the stuck code, how, its stack, and why it may be warm-up. */
    private record Found(
            String what,
            Verdict verdict,
            int spilled,
            StackTraceElement[] stack,
            @Nullable String warmUp) {

        Found withStack(StackTraceElement[] now) {
            return new Found(what, verdict, spilled, now, warmUp);
        }
    }

    private void stalled(int i, Carrier c, long since, long now, Verdict v) {
        Object task = c.currentTask();
        StackTraceElement[] stack = stackOf(task, c); // taken before the spill, which may let the carrier move on
        String what = task instanceof CoroutineImpl<?> co
                ? "coroutine " + co.name()
                : task != null ? "task " + task : "code outside cosched's tasks (a Netty handler or task on the loop)";
        String warmUp = warmUpCause(i, stack, now);
        boolean judgedLater = warmUp != null && now - since < warmUpLimitNanos;
        if (!judgedLater) {
            stalls.increment(); // before the flag: who sees a stalled carrier sees it counted
        }
        c.stalled = true;
        Found found = new Found(what, v, c.spillQueued(), stack, warmUp);
        if (judgedLater) {
            warmingUp[i] = found; // one line when it ends, or its stack at the warm-up limit
        } else {
            reportStall(c, found, now - since, false);
        }
    }

    private static StackTraceElement[] stackOf(@Nullable Object task, Carrier c) {
        if (task instanceof CoroutineImpl<?> co) {
            return co.thread().getStackTrace();
        }
        Thread t = c.thread();
        return t != null ? t.getStackTrace() : new StackTraceElement[0];
    }

    /**
     * Why a stall found now may be the JVM warming up, or {@code null}: its code loads or initialises classes, the JVM
     * loaded ten classes or more while the suspect was watched (it may wait for another thread's class initialisation),
     * or the JIT compiled for a tenth of that time (the code it runs is likely not compiled yet).
     */
    private @Nullable String warmUpCause(int i, StackTraceElement[] stack, long now) {
        if (warmUpLimitNanos == 0) {
            return null;
        }
        if (loadsClasses(stack)) {
            return "loading classes";
        }
        long watched = now - baseAt[i];
        long classesThen = baseClasses[i];
        long loaded = warmth.loadedClasses() - classesThen;
        if (classesThen >= 0 && loaded >= CLASSES_LOADED) {
            return "the JVM loading classes: " + loaded + " loaded in the " + millis(watched) + " ms watched";
        }
        long jitThen = baseJit[i];
        long compiled = warmth.jitMillis() - jitThen;
        if (jitThen >= 0
                && compiled > 0
                && watched > 0
                && TimeUnit.MILLISECONDS.toNanos(compiled) * JIT_SHARE >= watched) {
            return "the JIT compiling: " + compiled + " ms of compiling in the " + millis(watched) + " ms watched";
        }
        return null;
    }

    /** The JFR event of a stall, warm-up or not. */
    private void recordStall(Carrier c, Found f, long stuckNanos, boolean warmUp) {
        JfrEvents.stall(
                owner.name(),
                c.threadName(),
                stuckNanos,
                f.verdict() == Verdict.BLOCKED,
                f.what(),
                f.spilled(),
                f.stack(),
                STACK_FRAMES,
                warmUp);
    }

    /** A stall: counted by the caller; its JFR event, and a WARN with the stack. */
    private void reportStall(Carrier c, Found f, long stuckNanos, boolean pastLimit) {
        recordStall(c, f, stuckNanos, false);
        if (!LOG.isLoggable(System.Logger.Level.WARNING)) {
            return;
        }
        StringBuilder sb = new StringBuilder();
        sb.append(owner.kind())
                .append(" '")
                .append(owner.name())
                .append("': carrier ")
                .append(c.threadName())
                .append(" has been stuck for ")
                .append(millis(stuckNanos))
                .append(" ms (threshold ")
                .append(millis(thresholdNanos))
                .append(" ms) in ")
                .append(f.what())
                .append(
                        f.verdict() == Verdict.BLOCKED
                                ? ", blocked (waiting on a lock or in a blocking call)"
                                : ", running");
        if (pastLimit) {
            sb.append(", past the warm-up limit of ")
                    .append(millis(warmUpLimitNanos))
                    .append(" ms (at the threshold: ")
                    .append(f.warmUp())
                    .append(")");
        }
        sb.append("; ")
                .append(f.spilled())
                .append(" queued continuations spilled, and continuations and due timers for it go to other "
                        + "carriers until it moves again. Stack")
                .append(pastLimit ? " now:" : ":");
        StackTraceElement[] stack = f.stack();
        int frames = Math.min(stack.length, STACK_FRAMES);
        for (int k = 0; k < frames; k++) {
            sb.append("\n\tat ").append(stack[k]);
        }
        if (stack.length > frames) {
            sb.append("\n\t... ").append(stack.length - frames).append(" more");
        }
        LOG.log(System.Logger.Level.WARNING, sb.toString());
    }

    /** A warm-up stall, now that it ended within the warm-up limit: counted, its JFR event, and one INFO line. */
    private void reportWarmUp(Carrier c, Found f, long stuckNanos) {
        warmUpStalls.increment();
        recordStall(c, f, stuckNanos, true);
        // the first requests of a fresh JVM load classes and run code the JIT has not compiled: expected, so one line
        // an operator can leave on, and a counter apart from the stalls that page someone
        LOG.log(
                System.Logger.Level.INFO,
                "{0} ''{1}'': carrier {2} was stuck for {3} ms (threshold {4} ms) in {5} while warming up ({6}); "
                        + "its work moved as for any stall. Counted in warmUpStalls, not stalls; a stall with none of "
                        + "these causes, or past the warm-up limit of {7} ms, logs its stack.",
                owner.kind(),
                owner.name(),
                c.threadName(),
                millis(stuckNanos),
                millis(thresholdNanos),
                f.what(),
                f.warmUp(),
                millis(warmUpLimitNanos));
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
        Found w = warmingUp[i];
        warmingUp[i] = null;
        if (w != null) {
            reportWarmUp(c, w, stuckNanos); // its one line
        }
        JfrEvents.stallEnded(owner.name(), c.threadName(), stuckNanos);
        if (w != null) {
            return;
        }
        LOG.log(
                System.Logger.Level.INFO,
                "{0} ''{1}'': carrier {2} moves again after being stuck for about {3} ms",
                owner.kind(),
                owner.name(),
                c.threadName(),
                millis(stuckNanos));
    }

    private static long millis(long nanos) {
        return TimeUnit.NANOSECONDS.toMillis(nanos);
    }
}
