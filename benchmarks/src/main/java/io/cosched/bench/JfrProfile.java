package io.cosched.bench;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordedStackTrace;
import jdk.jfr.consumer.RecordingFile;
import org.jspecify.annotations.Nullable;

/**
 * Reads the execution samples of JFR recordings made under a fixed load (see
 * {@code benchmarks/profile.sh}) and compares them per request.
 *
 * <pre>
 * JfrProfile top  &lt;recording.jfr&gt; [filter] [rows]          methods by inclusive share of samples
 * JfrProfile diff &lt;a.jfr&gt; &lt;a req/s&gt; &lt;b.jfr&gt; &lt;b req/s&gt; [rows]  where a spends more per request than b
 * JfrProfile phases &lt;recording.jfr&gt; [CPU us per request]   a request's samples by phase of the Spring stack
 * JfrProfile owners &lt;a.jfr&gt; &lt;a req/s&gt; [&lt;b.jfr&gt; &lt;b req/s&gt;] [rows]  samples by the library running (self time)
 * </pre>
 *
 * <p>A sample counts once for every method on its stack (inclusive). For {@code diff}, a method's
 * samples are divided by the throughput of its run, so that the columns compare CPU per request
 * (in samples per 1,000 req/s) rather than per second. Lambda classes are named after their
 * enclosing class, since their generated names differ between JVMs. While a virtual thread is
 * mounted, JFR shows its frames, not its carrier's: a coroutine's work appears under
 * {@code VirtualThread.run}, not under the loop.
 */
public final class JfrProfile {

    private JfrProfile() {}

    public static void main(String[] args) throws IOException {
        if (args.length >= 2 && args[0].equals("top")) {
            top(Path.of(args[1]), args.length > 2 ? args[2] : "", args.length > 3 ? Integer.parseInt(args[3]) : 40);
        } else if (args.length >= 5 && args[0].equals("diff")) {
            diff(
                    Path.of(args[1]),
                    Double.parseDouble(args[2]),
                    Path.of(args[3]),
                    Double.parseDouble(args[4]),
                    args.length > 5 ? Integer.parseInt(args[5]) : 40);
        } else if (args.length >= 3 && args[0].equals("owners")) {
            boolean two = args.length >= 5;
            owners(
                    Path.of(args[1]),
                    Double.parseDouble(args[2]),
                    two ? Path.of(args[3]) : null,
                    two ? Double.parseDouble(args[4]) : 0,
                    args.length > (two ? 5 : 3) ? Integer.parseInt(args[two ? 5 : 3]) : 40);
        } else if (args.length >= 2 && args[0].equals("phases")) {
            phases(Path.of(args[1]), args.length > 2 ? Double.parseDouble(args[2]) : 0);
        } else {
            System.err.println("usage: JfrProfile top <recording.jfr> [filter] [rows]\n"
                    + "       JfrProfile diff <a.jfr> <a req/s> <b.jfr> <b req/s> [rows]\n"
                    + "       JfrProfile phases <recording.jfr> [CPU us per request]\n"
                    + "       JfrProfile owners <a.jfr> <a req/s> [<b.jfr> <b req/s>] [rows]");
            System.exit(2);
        }
    }

    /** Samples per method (inclusive), with the total under the key {@code ""}. */
    static Map<String, Integer> inclusive(Path recording) throws IOException {
        Map<String, Integer> counts = new HashMap<>();
        for (RecordedEvent event : RecordingFile.readAllEvents(recording)) {
            if (!event.getEventType().getName().equals("jdk.ExecutionSample")) {
                continue;
            }
            RecordedStackTrace stack = event.getStackTrace();
            if (stack == null) {
                continue;
            }
            counts.merge("", 1, Integer::sum);
            Set<String> seen = new HashSet<>();
            for (RecordedFrame frame : stack.getFrames()) {
                String method = name(frame);
                if (seen.add(method)) {
                    counts.merge(method, 1, Integer::sum);
                }
            }
        }
        return counts;
    }

    private static String name(RecordedFrame frame) {
        String type = frame.getMethod().getType().getName();
        int lambda = type.indexOf("$$Lambda");
        if (lambda >= 0) {
            type = type.substring(0, lambda) + "$$Lambda";
        }
        return type + "." + frame.getMethod().getName();
    }

    private static void top(Path recording, String filter, int rows) throws IOException {
        Map<String, Integer> counts = inclusive(recording);
        int total = counts.getOrDefault("", 0);
        System.out.printf(Locale.ROOT, "%d samples in %s%n", total, recording);
        counts.entrySet().stream()
                .filter(e -> !e.getKey().isEmpty() && e.getKey().contains(filter))
                .sorted((x, y) -> Integer.compare(y.getValue(), x.getValue()))
                .limit(rows)
                .forEach(
                        e -> System.out.printf(Locale.ROOT, "%6.1f%%  %s%n", 100.0 * e.getValue() / total, e.getKey()));
    }

    private static void diff(Path a, double rpsA, Path b, double rpsB, int rows) throws IOException {
        Map<String, Integer> ca = inclusive(a);
        Map<String, Integer> cb = inclusive(b);
        Set<String> methods = new HashSet<>(ca.keySet());
        methods.addAll(cb.keySet());
        List<double[]> values = new ArrayList<>();
        List<String> names = new ArrayList<>();
        for (String m : methods) {
            names.add(m.isEmpty() ? "(all samples)" : m);
            values.add(new double[] {ca.getOrDefault(m, 0) / rpsA * 1000, cb.getOrDefault(m, 0) / rpsB * 1000});
        }
        List<Integer> order = new ArrayList<>();
        for (int i = 0; i < names.size(); i++) {
            order.add(i);
        }
        order.sort((x, y) -> Double.compare(values.get(y)[0] - values.get(y)[1], values.get(x)[0] - values.get(x)[1]));
        System.out.printf(
                Locale.ROOT, "samples per 1,000 req/s: a = %s (%.0f req/s), b = %s (%.0f req/s)%n", a, rpsA, b, rpsB);
        System.out.printf(Locale.ROOT, "%8s %8s %8s  %s%n", "a", "b", "a - b", "method (inclusive)");
        for (int i = 0; i < Math.min(rows, order.size()); i++) {
            int k = order.get(i);
            double[] v = values.get(k);
            System.out.printf(Locale.ROOT, "%8.2f %8.2f %+8.2f  %s%n", v[0], v[1], v[0] - v[1], names.get(k));
        }
    }

    /**
     * Self time by library: a sample belongs to the first frame from its top that is not the JDK's
     * ({@code java.}, {@code jdk.}, {@code sun.}), named by its first three package names, so a JDK
     * method counts for the library that called it. Where {@code diff} and {@code phases} count what a
     * library calls as well, this counts what runs in it: cosched's own share is the rows of
     * {@code io.cosched.} that are not the application's.
     */
    private static void owners(Path a, double rpsA, @Nullable Path b, double rpsB, int rows) throws IOException {
        Map<String, Integer> ca = owners(a);
        Map<String, Integer> cb = b == null ? Map.of() : owners(b);
        Set<String> keys = new HashSet<>(ca.keySet());
        keys.addAll(cb.keySet());
        keys.remove("");
        List<String> order = new ArrayList<>(keys);
        order.sort((x, y) -> Double.compare(
                ca.getOrDefault(y, 0) / rpsA + (b == null ? 0 : cb.getOrDefault(y, 0) / rpsB),
                ca.getOrDefault(x, 0) / rpsA + (b == null ? 0 : cb.getOrDefault(x, 0) / rpsB)));
        System.out.printf(
                Locale.ROOT,
                "self time by library, samples per 1,000 req/s: a = %s (%.0f req/s, %d samples)%s%n",
                a,
                rpsA,
                ca.getOrDefault("", 0),
                b == null
                        ? ""
                        : String.format(
                                Locale.ROOT, ", b = %s (%.0f req/s, %d samples)", b, rpsB, cb.getOrDefault("", 0)));
        System.out.printf(
                Locale.ROOT, "%8s %8s %8s  %s%n", "a", b == null ? "" : "b", b == null ? "" : "a - b", "library");
        System.out.printf(
                Locale.ROOT,
                "%8.1f %8s %8s  %s%n",
                ca.getOrDefault("", 0) / rpsA * 1000,
                b == null ? "" : String.format(Locale.ROOT, "%.1f", cb.getOrDefault("", 0) / rpsB * 1000),
                b == null
                        ? ""
                        : String.format(
                                Locale.ROOT,
                                "%+.1f",
                                ca.getOrDefault("", 0) / rpsA * 1000 - cb.getOrDefault("", 0) / rpsB * 1000),
                "(all samples)");
        for (String k : order.subList(0, Math.min(rows, order.size()))) {
            double va = ca.getOrDefault(k, 0) / rpsA * 1000;
            double vb = b == null ? 0 : cb.getOrDefault(k, 0) / rpsB * 1000;
            System.out.printf(
                    Locale.ROOT,
                    "%8.1f %8s %8s  %s%n",
                    va,
                    b == null ? "" : String.format(Locale.ROOT, "%.1f", vb),
                    b == null ? "" : String.format(Locale.ROOT, "%+.1f", va - vb),
                    k);
        }
    }

    /** Samples per owning library (see {@link #owners(Path, double, Path, double, int)}), the total under {@code ""}. */
    static Map<String, Integer> owners(Path recording) throws IOException {
        Map<String, Integer> counts = new HashMap<>();
        for (RecordedEvent event : RecordingFile.readAllEvents(recording)) {
            if (!event.getEventType().getName().equals("jdk.ExecutionSample") || event.getStackTrace() == null) {
                continue;
            }
            counts.merge("", 1, Integer::sum);
            String owner = "(the JDK only: virtual-thread scheduling, thread starts)";
            for (RecordedFrame frame : event.getStackTrace().getFrames()) {
                String type = frame.getMethod().getType().getName();
                if (!type.startsWith("java.") && !type.startsWith("jdk.") && !type.startsWith("sun.")) {
                    String[] parts = type.split("\\.");
                    owner = String.join(".", Arrays.copyOf(parts, Math.min(3, parts.length - 1)));
                    break;
                }
            }
            counts.merge(owner, 1, Integer::sum);
        }
        return counts;
    }

    /**
     * The phases of a request through Spring WebFlux: a sample belongs to the phase of the frame
     * nearest its top that matches one of these prefixes (the first phase listed wins for one frame),
     * so time in a JDK method counts for the library that called it.
     */
    private static final String[][] PHASES = {
        {"context propagation (Micrometer's ThreadLocalAccessors)", "io.micrometer.context."},
        {
            "observation (Micrometer)",
            "io.micrometer.",
            "org.springframework.http.server.reactive.observation.",
            "org.springframework.boot.micrometer.",
            "org.springframework.boot.actuate.metrics."
        },
        {
            "return value: content negotiation and encoding",
            "org.springframework.web.reactive.result.method.annotation.AbstractMessageWriterResultHandler.",
            "org.springframework.web.reactive.result.method.annotation.ResponseBodyResultHandler.",
            "org.springframework.web.reactive.result.HandlerResultHandlerSupport.",
            "org.springframework.http.codec.",
            "org.springframework.core.codec.",
            "tools.jackson.",
            "com.fasterxml.jackson."
        },
        {
            "argument resolution",
            "org.springframework.web.reactive.result.method.InvocableHandlerMethod.getMethodArgumentValues",
            "org.springframework.web.reactive.result.method.annotation.AbstractNamedValueArgumentResolver."
        },
        // the benchmark's own handlers, and what they call that no phase above names (Spring Data, JDBC drivers)
        {"the handler method itself and what it calls", "io.cosched.bench."},
        {
            "handler mapping",
            "org.springframework.web.reactive.handler.AbstractHandlerMapping.",
            "org.springframework.web.reactive.result.method.AbstractHandlerMethodMapping.",
            "org.springframework.web.reactive.result.method.RequestMappingInfoHandlerMapping.",
            "org.springframework.web.reactive.result.method.RequestMappingInfo.",
            "org.springframework.web.reactive.result.condition.",
            "org.springframework.web.util.pattern."
        },
        {
            "the coroutine or virtual thread: start, park and resume, context restore (cosched, the JDK)",
            "io.cosched.",
            "java.lang.VirtualThread",
            "jdk.internal.vm.Continuation"
        },
        {
            "handler invocation and the rest of DispatcherHandler",
            "org.springframework.web.reactive.result.method.",
            "org.springframework.web.reactive.DispatcherHandler.",
            "org.springframework.web.method."
        },
        {"WebFilter chain", "org.springframework.web.server.handler.", "org.springframework.web.filter.reactive."},
        {
            "WebFlux exchange: request, response, attributes, session",
            "org.springframework.web.server.",
            "org.springframework.http.server.reactive.",
            "org.springframework.http.",
            "org.springframework.web."
        },
        {"Reactor operators", "reactor.core.", "reactor.util."},
        {"Reactor Netty HTTP server", "reactor.netty."},
        {"Netty: epoll, HTTP codec, buffers", "io.netty."},
    };

    private static void phases(Path recording, double cpuUsPerRequest) throws IOException {
        int[] counts = new int[PHASES.length + 1];
        int total = 0;
        for (RecordedEvent event : RecordingFile.readAllEvents(recording)) {
            if (!event.getEventType().getName().equals("jdk.ExecutionSample") || event.getStackTrace() == null) {
                continue;
            }
            total++;
            counts[phaseOf(event.getStackTrace())]++;
        }
        System.out.printf(
                Locale.ROOT, "%d samples in %s, by phase (the frame nearest the top decides)%n", total, recording);
        System.out.printf(Locale.ROOT, "%7s %9s  %s%n", "share", cpuUsPerRequest > 0 ? "us/req" : "", "phase");
        for (int i = 0; i <= PHASES.length; i++) {
            double share = total == 0 ? 0 : (double) counts[i] / total;
            System.out.printf(
                    Locale.ROOT,
                    "%6.1f%% %9s  %s%n",
                    100 * share,
                    cpuUsPerRequest > 0 ? String.format(Locale.ROOT, "%.1f", share * cpuUsPerRequest) : "",
                    i < PHASES.length ? PHASES[i][0] : "other (JDK, logging, threads outside the request)");
        }
    }

    private static int phaseOf(RecordedStackTrace stack) {
        for (RecordedFrame frame : stack.getFrames()) { // top of the stack first
            String method = frame.getMethod().getType().getName() + "."
                    + frame.getMethod().getName();
            for (int p = 0; p < PHASES.length; p++) {
                for (int k = 1; k < PHASES[p].length; k++) {
                    if (method.startsWith(PHASES[p][k])) {
                        return p;
                    }
                }
            }
        }
        return PHASES.length;
    }
}
