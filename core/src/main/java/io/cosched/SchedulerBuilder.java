package io.cosched;

import io.cosched.internal.Durations;
import io.cosched.internal.RuntimeSettings;
import java.time.Duration;
import java.util.Objects;

/**
 * The settings both builders share ({@link IOManager.Builder}, {@link PoolScheduler.Builder}); each
 * is checked, with its name, value and rule, by {@code build()}.
 */
abstract sealed class SchedulerBuilder<B extends SchedulerBuilder<B>> permits IOManager.Builder, PoolScheduler.Builder {

    String name;
    int threads = Runtime.getRuntime().availableProcessors();
    boolean daemon;
    boolean requireCarrierMode;
    Duration stallThreshold = IOManager.DEFAULT_STALL_THRESHOLD;
    Duration stallWarmUpLimit = IOManager.DEFAULT_STALL_WARM_UP_LIMIT;
    boolean trackCoroutines;
    ScopeHook scopeHook = ScopeHook.NONE;

    SchedulerBuilder(String defaultName) {
        this.name = defaultName;
    }

    abstract B self();

    /** Scheduler name; carrier threads are named {@code <name>-<index>}. */
    public B name(String name) {
        this.name = name;
        return self();
    }

    /** Carriers (event loops for an IOManager). Default: available processors. */
    public B threads(int threads) {
        this.threads = threads;
        return self();
    }

    /** Whether carrier threads are daemon threads. Default false: a running scheduler keeps the JVM alive. */
    public B daemon(boolean daemon) {
        this.daemon = daemon;
        return self();
    }

    /**
     * Fail {@code build()} with {@link CarrierModeUnavailableException} instead of falling back
     * to ordinary virtual threads when the JVM lacks {@code --add-opens java.base/java.lang=ALL-UNNAMED}.
     * Default false.
     */
    public B requireCarrierMode(boolean require) {
        this.requireCarrierMode = require;
        return self();
    }

    /**
     * How long a carrier may stay inside one task before the stall watchdog logs it (WARN, with
     * the stack), counts it in {@link SchedulerStats#stalls()}, and moves its work elsewhere until
     * it moves again: queued continuations spill to other carriers, an event loop's due timers fire
     * on another loop, and new channels skip a loop in one task for a tenth of it. A carrier that
     * got no CPU meanwhile counts in {@link SchedulerStats#starvations()} instead. Default 100 ms;
     * {@link Duration#ZERO} turns the watchdog off.
     */
    public B stallThreshold(Duration threshold) {
        this.stallThreshold = threshold;
        return self();
    }

    /**
     * The longest a stall may last and still count as the JVM warming up. A stall counts as warm-up by its cause,
     * never by the time since start: at the threshold its stuck code is loading or initialising classes, the JVM loaded
     * ten classes or more while it was watched, or the JIT compiled for a tenth of that time (code not compiled yet). If it ends within this limit it is logged as
     * one INFO line without the stack and counted in {@link SchedulerStats#warmUpStalls()} rather than {@link
     * SchedulerStats#stalls()}; still stuck at the warm-up limit it is a stall, logged then with its stack. Its work moves at
     * the threshold either way. Default 1 s; {@link Duration#ZERO}: no stall is warm-up.
     */
    public B stallWarmUpLimit(Duration limit) {
        this.stallWarmUpLimit = limit;
        return self();
    }

    /**
     * Keep a set of live coroutines, so that {@link Scheduler#coroutines()} can list them for a
     * dump. Costs a concurrent-set insert and removal per coroutine. Default false.
     */
    public B trackCoroutines(boolean track) {
        this.trackCoroutines = track;
        return self();
    }

    /**
     * What {@link TaskScope}s opened on this scheduler's coroutines add: a default deadline and the context their
     * subtasks carry from the owner. Default {@link ScopeHook#NONE}.
     */
    public B scopeHook(ScopeHook hook) {
        this.scopeHook = hook;
        return self();
    }

    /** The checked settings, by the rules of {@link Arguments}. */
    final RuntimeSettings settings(Transport transport, boolean useCaller) {
        Arguments.nonBlank("name", name);
        Arguments.positive("threads", threads);
        Arguments.nonNegative("stallThreshold", stallThreshold);
        Arguments.nonNegative("stallWarmUpLimit", stallWarmUpLimit);
        Objects.requireNonNull(scopeHook, "scopeHook: null (expected: a hook, or ScopeHook.NONE)");
        return new RuntimeSettings(
                name,
                threads,
                daemon,
                requireCarrierMode,
                Durations.toNanos("stallThreshold", stallThreshold, false),
                trackCoroutines,
                transport,
                useCaller,
                scopeHook,
                Durations.toNanos("stallWarmUpLimit", stallWarmUpLimit, false));
    }
}
