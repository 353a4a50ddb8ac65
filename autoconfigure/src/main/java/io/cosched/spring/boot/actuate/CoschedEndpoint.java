package io.cosched.spring.boot.actuate;

import io.cosched.CarrierStats;
import io.cosched.Coroutine;
import io.cosched.IOManager;
import io.cosched.Scheduler;
import io.cosched.SchedulerStats;
import io.cosched.spring.web.CoschedWebStats;
import io.cosched.spring.web.netty.ServerConnections;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;

/**
 * The {@code cosched} actuator endpoint, read-only:
 * <ul>
 *   <li>{@code GET /actuator/cosched}: every scheduler's numbers and carriers, and the web counters;</li>
 *   <li>{@code GET /actuator/cosched/{scheduler}}: one scheduler (404 for an unknown name);</li>
 *   <li>{@code GET /actuator/cosched/{scheduler}/dump}: its live coroutines with their stacks, only
 *       with {@code management.endpoint.cosched.dump.enabled=true} (404 otherwise).</li>
 * </ul>
 */
@Endpoint(id = "cosched")
public class CoschedEndpoint {

    /** Most coroutines one dump lists; {@link CoroutineDump#total()} says how many were live. */
    public static final int DUMP_LIMIT = 1000;

    private final Supplier<List<Scheduler>> schedulers;
    private final Supplier<@Nullable CoschedWebStats> web;
    private final Supplier<@Nullable ServerConnections> server;
    private final boolean dumpEnabled;

    public CoschedEndpoint(
            Supplier<List<Scheduler>> schedulers, Supplier<@Nullable CoschedWebStats> web, boolean dumpEnabled) {
        this(schedulers, web, () -> null, dumpEnabled);
    }

    public CoschedEndpoint(
            Supplier<List<Scheduler>> schedulers,
            Supplier<@Nullable CoschedWebStats> web,
            Supplier<@Nullable ServerConnections> server,
            boolean dumpEnabled) {
        this.schedulers = schedulers;
        this.web = web;
        this.server = server;
        this.dumpEnabled = dumpEnabled;
    }

    @ReadOperation
    public CoschedReport report() {
        Map<String, SchedulerReport> all = new LinkedHashMap<>();
        for (Scheduler s : schedulers.get()) {
            all.putIfAbsent(s.name(), SchedulerReport.of(s));
        }
        CoschedWebStats w = web.get();
        ServerConnections c = server.get();
        return new CoschedReport(all, w == null ? null : WebReport.of(w), c == null ? null : ServerReport.of(c));
    }

    @ReadOperation
    public @Nullable SchedulerReport scheduler(@Selector String scheduler) {
        Scheduler s = find(scheduler);
        return s == null ? null : SchedulerReport.of(s);
    }

    @ReadOperation
    public @Nullable CoroutineDump dump(@Selector String scheduler, @Selector String part) {
        Scheduler s = find(scheduler);
        if (!"dump".equals(part) || s == null || !dumpEnabled) {
            return null;
        }
        List<Coroutine<?>> live = s.coroutines();
        List<CoroutineReport> listed = new ArrayList<>(Math.min(live.size(), DUMP_LIMIT));
        for (Coroutine<?> c : live) {
            if (listed.size() == DUMP_LIMIT) {
                break;
            }
            listed.add(CoroutineReport.of(c));
        }
        return new CoroutineDump(s.name(), live.size(), listed);
    }

    private @Nullable Scheduler find(String name) {
        for (Scheduler s : schedulers.get()) {
            if (s.name().equals(name)) {
                return s;
            }
        }
        return null;
    }

    /** The whole endpoint: schedulers by name, and the web counters when cosched serves WebFlux handlers. */
    public record CoschedReport(
            Map<String, SchedulerReport> schedulers,
            @Nullable WebReport web,
            @Nullable ServerReport server) {}

    /**
     * One scheduler: {@link SchedulerStats} without the name (it is the key), its transport, and its
     * carriers. Type, mode, transport and carrier states are written in lower case ({@code io},
     * {@code carrier}, {@code epoll}, {@code idle}), the scheduler state in upper case ({@code RUNNING}).
     */
    public record SchedulerReport(
            String type,
            String mode,
            String transport,
            String state,
            int threads,
            int activeThreads,
            int idleThreads,
            int stalledThreads,
            long queueDepth,
            long coroutines,
            long ready,
            long running,
            long waiting,
            long sleeping,
            long timersPending,
            long completedTasks,
            long localWakeups,
            long remoteWakeups,
            long monitorWakeups,
            long stalls,
            long warmUpStalls,
            long starvations,
            long forks,
            long forksFailed,
            long forksCancelled,
            List<CarrierReport> carriers) {

        static SchedulerReport of(Scheduler s) {
            SchedulerStats t = s.stats();
            String transport = s instanceof IOManager io ? lowerCase(io.transport()) : "none";
            List<CarrierReport> carriers = new ArrayList<>(t.threads());
            for (CarrierStats c : s.carrierStats()) {
                carriers.add(new CarrierReport(
                        c.index(),
                        c.thread(),
                        lowerCase(c.state()),
                        c.queueDepth(),
                        c.coroutines(),
                        c.localWakeups(),
                        c.remoteWakeups(),
                        c.monitorWakeups()));
            }
            return new SchedulerReport(
                    lowerCase(t.type()),
                    lowerCase(t.mode()),
                    transport,
                    t.state().name(),
                    t.threads(),
                    t.activeThreads(),
                    t.idleThreads(),
                    t.stalledThreads(),
                    t.queueDepth(),
                    t.coroutines(),
                    t.ready(),
                    t.running(),
                    t.waiting(),
                    t.sleeping(),
                    t.timersPending(),
                    t.completedTasks(),
                    t.localWakeups(),
                    t.remoteWakeups(),
                    t.monitorWakeups(),
                    t.stalls(),
                    t.warmUpStalls(),
                    t.starvations(),
                    t.forks(),
                    t.forksFailed(),
                    t.forksCancelled(),
                    List.copyOf(carriers));
        }
    }

    /** One carrier, as {@link CarrierStats} with its state in lower case ({@code idle}, {@code busy}, {@code stalled}). */
    public record CarrierReport(
            int index,
            String thread,
            String state,
            long queueDepth,
            int coroutines,
            long localWakeups,
            long remoteWakeups,
            long monitorWakeups) {}

    static String lowerCase(Enum<?> value) {
        return value.name().toLowerCase(Locale.ROOT);
    }

    /**
     * The web server's connections: accepted since start, open now, waiting in the listen queue now
     * and the host's listen-queue overflows since boot ({@code -1} where the kernel does not say).
     */
    public record ServerReport(long accepted, int open, long listenQueue, long listenOverflows) {

        static ServerReport of(ServerConnections c) {
            return new ServerReport(c.accepted(), c.open(), c.listenQueue(), c.listenOverflows());
        }
    }

    /** Requests handled by coroutines: running now, and counted since start. */
    public record WebReport(
            int inFlight,
            int limit,
            int queued,
            long timedOut,
            long shed,
            long queueTimedOut,
            long shedEarly,
            long cancelled,
            long coroutinesStarted,
            long inlined,
            long offLoop) {

        static WebReport of(CoschedWebStats w) {
            return new WebReport(
                    w.inFlight(),
                    w.limit(),
                    w.queued(),
                    w.timedOut(),
                    w.shed(),
                    w.queueTimedOut(),
                    w.shedEarly(),
                    w.cancelled(),
                    w.coroutinesStarted(),
                    w.inlined(),
                    w.offLoop());
        }
    }

    /** A coroutine dump: how many were live, and up to {@link #DUMP_LIMIT} of them. */
    public record CoroutineDump(String scheduler, int total, List<CoroutineReport> coroutines) {}

    /** One live coroutine and where it is. */
    public record CoroutineReport(
            long id, String name, String state, @Nullable String serving, List<String> stack) {

        static CoroutineReport of(Coroutine<?> c) {
            StackTraceElement[] frames = c.thread().getStackTrace();
            List<String> stack = new ArrayList<>(frames.length);
            for (StackTraceElement f : frames) {
                stack.add(f.toString());
            }
            Object serving = c.attachment();
            return new CoroutineReport(
                    c.id(), c.name(), c.state().name(), serving == null ? null : serving.toString(), stack);
        }
    }
}
