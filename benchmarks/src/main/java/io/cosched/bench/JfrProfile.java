package io.cosched.bench;

import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordedStackTrace;
import jdk.jfr.consumer.RecordingFile;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * Reads the execution samples of JFR recordings made under a fixed load (see
 * {@code benchmarks/profile.sh}) and compares them per request.
 *
 * <pre>
 * JfrProfile top  &lt;recording.jfr&gt; [filter] [rows]          methods by inclusive share of samples
 * JfrProfile diff &lt;a.jfr&gt; &lt;a req/s&gt; &lt;b.jfr&gt; &lt;b req/s&gt; [rows]  where a spends more per request than b
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

    private JfrProfile() {
    }

    public static void main(String[] args) throws IOException {
        if (args.length >= 2 && args[0].equals("top")) {
            top(Path.of(args[1]), args.length > 2 ? args[2] : "", args.length > 3 ? Integer.parseInt(args[3]) : 40);
        } else if (args.length >= 5 && args[0].equals("diff")) {
            diff(Path.of(args[1]), Double.parseDouble(args[2]), Path.of(args[3]), Double.parseDouble(args[4]),
                    args.length > 5 ? Integer.parseInt(args[5]) : 40);
        } else {
            System.err.println("usage: JfrProfile top <recording.jfr> [filter] [rows]\n"
                    + "       JfrProfile diff <a.jfr> <a req/s> <b.jfr> <b req/s> [rows]");
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
                .forEach(e -> System.out.printf(Locale.ROOT, "%6.1f%%  %s%n", 100.0 * e.getValue() / total, e.getKey()));
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
        System.out.printf(Locale.ROOT, "samples per 1,000 req/s: a = %s (%.0f req/s), b = %s (%.0f req/s)%n", a, rpsA, b, rpsB);
        System.out.printf(Locale.ROOT, "%8s %8s %8s  %s%n", "a", "b", "a - b", "method (inclusive)");
        for (int i = 0; i < Math.min(rows, order.size()); i++) {
            int k = order.get(i);
            double[] v = values.get(k);
            System.out.printf(Locale.ROOT, "%8.2f %8.2f %+8.2f  %s%n", v[0], v[1], v[0] - v[1], names.get(k));
        }
    }
}
