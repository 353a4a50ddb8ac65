package io.cosched.internal;

import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Event;
import jdk.jfr.FlightRecorder;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.Period;
import jdk.jfr.StackTrace;
import jdk.jfr.Timespan;
import org.jspecify.annotations.Nullable;

/**
 * The runtime's JDK Flight Recorder events, category "cosched": a carrier stall (with its verdict and
 * the top of the stuck code's stack) and its end, a task scope's subtask cancelled before it ended, and, at the
 * start of every recording chunk, the fallback mode when coroutines cannot run on cosched's carriers. Each costs a check of a constant
 * and of the event's enabled flag when no recording wants it. A JVM without the {@code jdk.jfr}
 * module (a trimmed runtime image) records nothing and loads none of the event classes.
 */
public final class JfrEvents {

    /** Whether this JVM has Flight Recorder at all. */
    static final boolean AVAILABLE = ModuleLayer.boot().findModule("jdk.jfr").isPresent();

    private JfrEvents() {}

    @Name("io.cosched.Stall")
    @Label("Carrier Stall")
    @Category("cosched")
    @Description("A carrier (an event loop or a pool thread) has not moved on for longer than the stall threshold")
    @StackTrace(false)
    static final class Stall extends Event {
        @Label("Scheduler")
        @Nullable
        String scheduler;

        @Label("Carrier")
        @Nullable
        String carrier;

        @Label("Stuck For")
        @Timespan(Timespan.NANOSECONDS)
        long stuckFor;

        @Label("Verdict")
        @Description("running (burning CPU) or blocked (waiting on a lock or in a blocking call)")
        @Nullable
        String verdict;

        @Label("Task")
        @Description("the coroutine or task the carrier is stuck in")
        @Nullable
        String task;

        @Label("Spilled")
        @Description("queued continuations handed to other carriers")
        int spilled;

        @Label("Top Frames")
        @Nullable
        String topFrames;

        @Label("Warm-Up")
        @Description("in the warm-up period after start, or loading classes: logged as one line, "
                + "counted apart from the other stalls")
        boolean warmUp;
    }

    @Name("io.cosched.StallEnded")
    @Label("Carrier Stall Ended")
    @Category("cosched")
    @Description("A carrier reported stuck moves again")
    @StackTrace(false)
    static final class StallEnded extends Event {
        @Label("Scheduler")
        @Nullable
        String scheduler;

        @Label("Carrier")
        @Nullable
        String carrier;

        @Label("Stuck For")
        @Timespan(Timespan.NANOSECONDS)
        long stuckFor;
    }

    @Name("io.cosched.CarrierModeFallback")
    @Label("Carrier Mode Fallback")
    @Category("cosched")
    @Description(
            "Coroutines run as ordinary virtual threads on the JDK's scheduler, not on cosched's carriers and event loops")
    @StackTrace(false)
    @Period("beginChunk")
    static final class CarrierModeFallback extends Event {
        @Label("Reason")
        @Nullable
        String reason;

        @Label("Remedy")
        @Nullable
        String remedy;
    }

    @Name("io.cosched.ForkCancelled")
    @Label("Subtask Cancelled")
    @Category("cosched")
    @Description(
            "A subtask of a task scope was cancelled before it ended: a sibling failed or won, the scope's deadline "
                    + "passed, its owner was interrupted (a request whose client left) or interrupted at its own deadline "
                    + "(a request that timed out), or it was closed early")
    @StackTrace(false)
    static final class ForkCancelled extends Event {
        @Label("Scope")
        @Nullable
        String scope;

        @Label("Owner")
        @Description("what the scope's owner works for (a request), else its thread")
        @Nullable
        String owner;

        @Label("Reason")
        @Nullable
        String reason;

        @Label("Ran For")
        @Description("from the subtask's start to its end; 0 when it never ran")
        @Timespan(Timespan.NANOSECONDS)
        long ranFor;

        @Label("Deadline In")
        @Description("from the subtask's end to the scope's deadline (its own timeout's or its owner's, the earlier), "
                + "negative once passed; N/A when it had none")
        @Timespan(Timespan.NANOSECONDS)
        long deadlineIn;
    }

    /**
     * A subtask of scope {@code scope} ended cancelled, having run for {@code ranForNanos} (0: never ran), {@code
     * deadlineInNanos} before the scope's deadline ({@link Long#MIN_VALUE}: none).
     */
    public static void forkCancelled(
            String scope, Object owner, String reason, long ranForNanos, long deadlineInNanos) {
        if (!AVAILABLE) {
            return;
        }
        ForkCancelled e = new ForkCancelled();
        if (e.isEnabled()) {
            e.scope = scope;
            e.owner = String.valueOf(owner);
            e.reason = reason;
            e.ranFor = ranForNanos;
            e.deadlineIn = deadlineInNanos;
            e.commit();
        }
    }

    static void stall(
            String scheduler,
            String carrier,
            long stuckForNanos,
            boolean blocked,
            String task,
            int spilled,
            StackTraceElement[] stack,
            int frames,
            boolean warmUp) {
        if (!AVAILABLE) {
            return;
        }
        Stall e = new Stall();
        if (!e.isEnabled()) {
            return;
        }
        e.scheduler = scheduler;
        e.carrier = carrier;
        e.stuckFor = stuckForNanos;
        e.verdict = blocked ? "blocked" : "running";
        e.task = task;
        e.spilled = spilled;
        e.warmUp = warmUp;
        StringBuilder sb = new StringBuilder();
        for (int k = 0; k < Math.min(frames, stack.length); k++) {
            sb.append(k == 0 ? "" : "\n").append(stack[k]);
        }
        e.topFrames = sb.toString();
        e.commit();
    }

    static void stallEnded(String scheduler, String carrier, long stuckForNanos) {
        if (!AVAILABLE) {
            return;
        }
        StallEnded e = new StallEnded();
        if (e.isEnabled()) {
            e.scheduler = scheduler;
            e.carrier = carrier;
            e.stuckFor = stuckForNanos;
            e.commit();
        }
    }

    /** From now on, every recording chunk starts with a fallback event that gives {@code reason}. */
    static void fallbackMode(String reason, String remedy) {
        if (!AVAILABLE) {
            return;
        }
        FlightRecorder.addPeriodicEvent(CarrierModeFallback.class, () -> {
            CarrierModeFallback e = new CarrierModeFallback();
            e.reason = reason;
            e.remedy = remedy;
            e.commit();
        });
    }
}
