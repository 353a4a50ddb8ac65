package io.cosched.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.ToDoubleFunction;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Turns {@code rates.csv} of {@code benchmarks/run.sh} (its fixed-rate windows, {@code BENCH_FRACTIONS}) into one
 * markdown table: per scenario and load, each variant's medians over the rounds of the server's CPU time per
 * request (with its range), context switches per request, p50 and p99 (latency from when each request was due,
 * p99 with its range), failed requests summed, and cosched's CPU per request and p99 over the variant's, round by
 * round, their median. Then, from LoadGen's JSON lines beside it ({@code loadgen-<variant>-<scenario>-<load>-<round>.json},
 * when LoadGen read the server's threads), where each variant's CPU goes: per group of threads (a thread's name with
 * its digits as '#'), CPU us and voluntary context switches (the thread waited and was woken) per request, medians
 * over the rounds, the groups that spent at least 1 us a request in some variant.
 *
 * <pre>RateSummary &lt;rates.csv&gt;</pre>
 */
public final class RateSummary {

    private static final String BASELINE = "cosched";

    private RateSummary() {}

    /** One fixed-rate window: a variant, a scenario, a load, a round. */
    record Window(
            int round,
            String variant,
            String scenario,
            String load,
            int rate,
            double cpu,
            double cs,
            double p50,
            double p99,
            long failed) {}

    public static void main(String[] args) throws IOException {
        if (args.length != 1) {
            throw new IllegalArgumentException("arguments: " + Arrays.toString(args) + " (expected: <rates.csv>)");
        }
        List<Window> windows = new ArrayList<>();
        List<String> lines = Files.readAllLines(Path.of(args[0]));
        for (String line : lines.subList(1, lines.size())) {
            String[] f = line.split(",", -1);
            if (f.length < 13 || f[10].isEmpty()) {
                continue; // LoadGen could not report the server's counters (it exited early): see its JSON
            }
            windows.add(new Window(
                    Integer.parseInt(f[0]),
                    f[1],
                    f[2],
                    f[3],
                    Integer.parseInt(f[4]),
                    HttpSummary.num(f[10]),
                    HttpSummary.num(f[11]),
                    HttpSummary.num(f[6]),
                    HttpSummary.num(f[7]),
                    (long) HttpSummary.num(f[8])));
        }
        System.out.print(table(windows));
        System.out.print(threads(windows, Path.of(args[0]).toAbsolutePath().getParent()));
    }

    private static final Pattern GROUP = Pattern.compile(
            "\\{\"name\":\"((?:[^\"\\\\]|\\\\.)*)\",\"cpuUs\":([0-9.]+),\"voluntary\":([0-9.]+),\"involuntary\":([0-9.]+)}");

    /** Per scenario and load: CPU us and voluntary switches per request of each group of threads, per variant. */
    static String threads(List<Window> windows, Path dir) throws IOException {
        // scenario|load -> group -> variant -> per round {cpu, voluntary}
        Map<String, Map<String, Map<String, List<double[]>>>> by = new LinkedHashMap<>();
        Map<String, List<String>> variantsOf = new LinkedHashMap<>();
        for (Window w : windows) {
            Path json = dir.resolve("loadgen-" + w.variant() + "-" + w.scenario() + "-"
                    + w.load().replace("rate-", "") + "-" + w.round() + ".json");
            if (!Files.isRegularFile(json)) {
                continue;
            }
            String key = w.scenario() + "|" + w.load().replace("rate-", "") + "|" + w.rate();
            List<String> vs = variantsOf.computeIfAbsent(key, k -> new ArrayList<>());
            if (!vs.contains(w.variant())) {
                vs.add(w.variant());
            }
            Matcher m = GROUP.matcher(Files.readString(json));
            while (m.find()) {
                by.computeIfAbsent(key, k -> new TreeMap<>())
                        .computeIfAbsent(m.group(1), k -> new LinkedHashMap<>())
                        .computeIfAbsent(w.variant(), k -> new ArrayList<>())
                        .add(new double[] {Double.parseDouble(m.group(2)), Double.parseDouble(m.group(3))});
            }
        }
        if (by.isEmpty()) {
            return "";
        }
        StringBuilder sb = new StringBuilder();
        sb.append("\n## Where the CPU goes at fixed rates: per group of the server's threads, CPU us / voluntary"
                + " switches per request (medians over the rounds)\n");
        by.forEach((key, groups) -> {
            String[] k = key.split("\\|");
            List<String> vs = variantsOf.get(key);
            sb.append("\n### ")
                    .append(k[0])
                    .append(" at ")
                    .append(k[2])
                    .append(" req/s (")
                    .append(k[1])
                    .append(")\n\n");
            sb.append("| threads |");
            vs.forEach(v -> sb.append(' ').append(v).append(" |"));
            sb.append('\n').append("|---|").append("---|".repeat(vs.size())).append('\n');
            List<Map.Entry<String, Map<String, List<double[]>>>> rows = new ArrayList<>(groups.entrySet());
            rows.removeIf(e -> e.getValue().values().stream().allMatch(rs -> median(cpu(rs)) < 1));
            rows.sort((a, b) -> Double.compare(busiest(b.getValue()), busiest(a.getValue())));
            for (Map.Entry<String, Map<String, List<double[]>>> row : rows) {
                sb.append("| ").append(row.getKey().replace("|", "\\|")).append(" |");
                for (String v : vs) {
                    List<double[]> rs = row.getValue().get(v);
                    sb.append(
                            rs == null
                                    ? " - |"
                                    : String.format(
                                            Locale.ROOT,
                                            " %.1f / %.2f |",
                                            median(cpu(rs)),
                                            median(rs.stream()
                                                    .mapToDouble(r -> r[1])
                                                    .toArray())));
                }
                sb.append('\n');
            }
        });
        return sb.toString();
    }

    private static double[] cpu(List<double[]> rounds) {
        return rounds.stream().mapToDouble(r -> r[0]).toArray();
    }

    private static double busiest(Map<String, List<double[]>> byVariant) {
        return byVariant.values().stream()
                .mapToDouble(rs -> median(cpu(rs)))
                .max()
                .orElse(0);
    }

    static String table(List<Window> windows) {
        // scenario -> load -> variant -> its windows, in the order met
        Map<String, Map<String, Map<String, List<Window>>>> by = new LinkedHashMap<>();
        for (Window w : windows) {
            by.computeIfAbsent(w.scenario(), k -> new TreeMap<>())
                    .computeIfAbsent(w.load(), k -> new LinkedHashMap<>())
                    .computeIfAbsent(w.variant(), k -> new ArrayList<>())
                    .add(w);
        }
        StringBuilder sb = new StringBuilder();
        sb.append("\n## At fixed rates (latency from when each request was due)\n\n");
        sb.append("| scenario | load | req/s | variant | CPU us/req (range) | cosched / variant CPU | switches/req"
                + " | p50 ms | p99 ms (range) | cosched / variant p99 | failed |\n");
        sb.append("|---|---|---|---|---|---|---|---|---|---|---|\n");
        by.forEach((scenario, loads) -> loads.forEach((load, variants) -> {
            List<Window> mine = variants.getOrDefault(BASELINE, List.of());
            variants.forEach((variant, ws) -> {
                double[] cpu = ws.stream().mapToDouble(Window::cpu).toArray();
                double[] p99 = ws.stream().mapToDouble(Window::p99).toArray();
                sb.append(String.format(
                        Locale.ROOT,
                        "| %s | %s | %d | %s | %.1f (%.1f-%.1f) | %s | %.2f | %.2f | %.2f (%.2f-%.2f) | %s | %d |%n",
                        scenario,
                        load.replace("rate-", ""),
                        ws.get(0).rate(),
                        variant,
                        median(cpu),
                        min(cpu),
                        max(cpu),
                        ratio(mine, ws, Window::cpu),
                        median(ws.stream().mapToDouble(Window::cs).toArray()),
                        median(ws.stream().mapToDouble(Window::p50).toArray()),
                        median(p99),
                        min(p99),
                        max(p99),
                        ratio(mine, ws, Window::p99),
                        ws.stream().mapToLong(Window::failed).sum()));
            });
        }));
        return sb.toString();
    }

    /** The median over the rounds both ran of cosched's figure over the variant's, "-" for cosched itself or none. */
    private static String ratio(List<Window> mine, List<Window> theirs, ToDoubleFunction<Window> f) {
        if (mine.isEmpty() || mine == theirs) {
            return "-";
        }
        List<Double> r = new ArrayList<>();
        for (Window a : mine) {
            for (Window b : theirs) {
                if (a.round() == b.round() && f.applyAsDouble(b) > 0) {
                    r.add(f.applyAsDouble(a) / f.applyAsDouble(b));
                }
            }
        }
        return r.isEmpty()
                ? "-"
                : String.format(
                        Locale.ROOT,
                        "%.2f",
                        median(r.stream().mapToDouble(Double::doubleValue).toArray()));
    }

    static double median(double[] a) {
        double[] s = a.clone();
        Arrays.sort(s);
        int n = s.length;
        return n == 0 ? Double.NaN : n % 2 == 1 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
    }

    private static double min(double[] a) {
        return Arrays.stream(a).min().orElse(Double.NaN);
    }

    private static double max(double[] a) {
        return Arrays.stream(a).max().orElse(Double.NaN);
    }
}
