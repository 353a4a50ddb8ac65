package io.cosched.spring.boot.actuate;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonUnwrapped;
import io.cosched.CarrierStats;
import io.cosched.Coroutine;
import io.cosched.IOManager;
import io.cosched.Scheduler;
import io.cosched.SchedulerStats;
import io.cosched.spring.web.CoschedWebStats;
import io.cosched.spring.web.netty.ServerConnections;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
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

    /** Per stats type, the methods {@link #readings} reads. */
    private static final ClassValue<List<Method>> READINGS = new ClassValue<>() {
        @Override
        protected List<Method> computeValue(Class<?> type) {
            return Arrays.stream(type.getMethods())
                    .filter(m -> m.getDeclaringClass() != Object.class
                            && !Modifier.isStatic(m.getModifiers())
                            && m.getParameterCount() == 0
                            && (m.getReturnType() == int.class || m.getReturnType() == long.class)
                            && !m.getName().equals("hashCode"))
                    .sorted(Comparator.comparing(Method::getName))
                    .toList();
        }
    };

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
        return new CoschedReport(
                all,
                w == null ? null : readings(CoschedWebStats.class, w),
                c == null ? null : readings(ServerConnections.class, c));
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

    /**
     * The whole endpoint: schedulers by name, the web counters when cosched serves WebFlux handlers, and the web
     * server's connections when cosched's loops carry it. The web counters are {@link CoschedWebStats}'s readings
     * by name, the server's those of {@link ServerConnections}.
     */
    public record CoschedReport(
            Map<String, SchedulerReport> schedulers,
            @Nullable Map<String, Number> web,
            @Nullable Map<String, Number> server) {}

    /**
     * One scheduler: its {@link SchedulerStats} written in place, without the name (it is the key), with its
     * transport and its carriers. Type, mode and transport are written in lower case ({@code io},
     * {@code carrier}, {@code epoll}) as they always were; the scheduler state keeps its upper case
     * ({@code RUNNING}). A component added to {@link SchedulerStats} shows here with no change to this class.
     */
    public record SchedulerReport(
            String type,
            String mode,
            String transport,

            @JsonUnwrapped @JsonIgnoreProperties({"name", "type", "mode"})
            SchedulerStats stats,

            List<CarrierReport> carriers) {

        static SchedulerReport of(Scheduler s) {
            SchedulerStats t = s.stats();
            String transport = s instanceof IOManager io ? lowerCase(io.transport()) : "none";
            List<CarrierReport> carriers = new ArrayList<>(t.threads());
            for (CarrierStats c : s.carrierStats()) {
                carriers.add(new CarrierReport(lowerCase(c.state()), c));
            }
            return new SchedulerReport(lowerCase(t.type()), lowerCase(t.mode()), transport, t, List.copyOf(carriers));
        }
    }

    /**
     * One carrier: its {@link CarrierStats} written in place, with the state in lower case ({@code idle},
     * {@code busy}, {@code stalled}) as it always was.
     */
    public record CarrierReport(
            String state,
            @JsonUnwrapped @JsonIgnoreProperties("state") CarrierStats stats) {}

    static String lowerCase(Enum<?> value) {
        return value.name().toLowerCase(Locale.ROOT);
    }

    /**
     * What {@code source} reports through {@code type}, by name in alphabetical order: every public
     * no-argument method of {@code type} that returns an {@code int} or a {@code long}, read now. So a
     * counter added to {@link CoschedWebStats} or {@link ServerConnections} shows in the endpoint with no
     * change here. (Those two are read-only views, not records that Jackson could write itself.)
     */
    static <T> Map<String, Number> readings(Class<T> type, T source) {
        Map<String, Number> readings = new LinkedHashMap<>();
        for (Method m : READINGS.get(type)) {
            try {
                readings.put(m.getName(), (Number) m.invoke(source));
            } catch (ReflectiveOperationException e) {
                throw new IllegalStateException(type.getName() + "." + m.getName() + "(): cannot be read", e);
            }
        }
        return readings;
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
