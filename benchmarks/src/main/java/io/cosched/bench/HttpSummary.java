package io.cosched.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.CategoryChart;
import org.knowm.xchart.CategoryChartBuilder;
import org.knowm.xchart.style.Styler;

/**
 * Turns {@code runs.csv} of {@code benchmarks/run.sh} into markdown tables of medians with ratios
 * against cosched, and bar charts (CPU per request, throughput, p99, context switches per request) as
 * PNG next to it. The first figure is the server's CPU time per request, with its range over the
 * rounds, and cosched's CPU per request over the variant's, round by round.
 *
 * <pre>HttpSummary &lt;results-dir&gt; [image-dir]</pre>
 */
public final class HttpSummary {

    private static final String BASELINE = "cosched";

    private HttpSummary() {}

    record Run(
            int round,
            String variant,
            String scenario,
            int connections,
            double rps,
            double p50,
            double p90,
            double p99,
            long errors,
            double cpu,
            double rss,
            double csPerRequest,
            double cpuPerRequest,
            double jitPerRequest) {}

    public static void main(String[] args) throws IOException {
        Path dir = Path.of(args[0]);
        Path images = args.length > 1 ? Path.of(args[1]) : dir;
        List<Run> runs = new ArrayList<>();
        List<String> lines = Files.readAllLines(dir.resolve("runs.csv"));
        for (String line : lines.subList(1, lines.size())) {
            String[] f = line.split(",", -1);
            if (f.length < 11 || f[4].isEmpty()) {
                continue; // a run wrk could not finish
            }
            // runs recorded before a column existed have none
            double cs = f.length > 12 ? num(f[12]) : Double.NaN;
            double requests = f.length > 11 ? num(f[11]) : Double.NaN;
            double cpuPerRequest = f.length > 13 ? num(f[13]) : num(f[9]) * 1e6 / requests;
            double jitPerRequest = f.length > 15 ? num(f[15]) : Double.NaN;
            runs.add(new Run(
                    Integer.parseInt(f[0]),
                    f[1],
                    f[2],
                    Integer.parseInt(f[3]),
                    num(f[4]),
                    num(f[5]),
                    num(f[6]),
                    num(f[7]),
                    (long) num(f[8]),
                    num(f[9]),
                    num(f[10]),
                    cs,
                    cpuPerRequest,
                    jitPerRequest));
        }
        Set<String> scenarios = new LinkedHashSet<>();
        Set<String> variants = new LinkedHashSet<>();
        runs.forEach(r -> {
            scenarios.add(r.scenario());
            variants.add(r.variant());
        });
        Map<String, Map<String, List<Run>>> cells = new LinkedHashMap<>();
        for (Run r : runs) {
            cells.computeIfAbsent(r.scenario(), k -> new LinkedHashMap<>())
                    .computeIfAbsent(r.variant(), k -> new ArrayList<>())
                    .add(r);
        }
        StringBuilder md = new StringBuilder();
        md.append(
                "Medians over rounds. \"CPU us/req\" is the server process's CPU time (user + system) over the measured "
                        + "window's requests, its range over the rounds in brackets; \"cosched / variant\" divides cosched's CPU per "
                        + "request by the variant's in each round (below 1: cosched spends less), median and rounds; \"of it JIT\" is the "
                        + "part of the CPU per request the JIT's compiler threads spent (median; blank in runs before it was recorded); "
                        + "\"switches/req\" is the server JVM's context switches (voluntary and not, all threads) per request.\n");
        for (String scenario : scenarios) {
            Map<String, List<Run>> byVariant = cells.get(scenario);
            List<Run> base = byVariant.get(BASELINE);
            md.append("\n### ")
                    .append(scenario)
                    .append(" (")
                    .append(byVariant.values().iterator().next().get(0).connections())
                    .append(" connections)\n\n")
                    .append(
                            "| variant | CPU us/req | of it JIT | cosched / variant | switches/req | req/s (median) | p50 ms | p90 ms | p99 ms | errors | peak RSS MB |\n")
                    .append("|---|---|---|---|---|---|---|---|---|---|---|\n");
            for (Map.Entry<String, List<Run>> e : byVariant.entrySet()) {
                List<Run> rs = e.getValue();
                md.append(String.format(
                        Locale.ROOT,
                        "| %s | %s | %s | %s | %.2f | %,.0f | %.2f | %.2f | %.2f | %d | %.0f |%n",
                        e.getKey(),
                        withRange(rs, Run::cpuPerRequest),
                        orBlank(median(rs, Run::jitPerRequest)),
                        e.getKey().equals(BASELINE) ? "1.00" : ratios(base, rs),
                        median(rs, Run::csPerRequest),
                        median(rs, Run::rps),
                        median(rs, Run::p50),
                        median(rs, Run::p90),
                        median(rs, Run::p99),
                        rs.stream().mapToLong(Run::errors).sum(),
                        median(rs, Run::rss)));
            }
        }
        System.out.print(md);
        Files.createDirectories(images);
        chart(
                cells,
                scenarios,
                variants,
                "median server CPU per request, microseconds (lower is better)",
                Run::cpuPerRequest,
                images.resolve("http-cpu-per-request"));
        chart(
                cells,
                scenarios,
                variants,
                "median requests/s (higher is better)",
                Run::rps,
                images.resolve("http-throughput"));
        chart(
                cells,
                scenarios,
                variants,
                "median p99 latency, ms (lower is better)",
                Run::p99,
                images.resolve("http-p99"));
        chart(
                cells,
                scenarios,
                variants,
                "server context switches per request (lower is better)",
                Run::csPerRequest,
                images.resolve("http-context-switches"));
    }

    private static void chart(
            Map<String, Map<String, List<Run>>> cells,
            Set<String> scenarios,
            Set<String> variants,
            String title,
            java.util.function.ToDoubleFunction<Run> metric,
            Path file)
            throws IOException {
        int width =
                Math.max(1000, 300 + scenarios.size() * (variants.size() * 14 + 24)); // room for every bar and label
        CategoryChart chart = new CategoryChartBuilder()
                .width(width)
                .height(450)
                .title(title)
                .xAxisTitle("scenario")
                .yAxisTitle("")
                .build();
        chart.getStyler().setLegendPosition(Styler.LegendPosition.OutsideE);
        chart.getStyler().setOverlapped(false);
        List<String> xs = new ArrayList<>(scenarios);
        for (String v : variants) {
            List<Double> ys = new ArrayList<>();
            for (String s : xs) {
                List<Run> rs = cells.get(s).get(v);
                double m = rs == null ? Double.NaN : median(rs, metric);
                ys.add(Double.isNaN(m) ? 0.0 : m);
            }
            chart.addSeries(v, xs, ys);
        }
        BitmapEncoder.saveBitmap(chart, file.toString(), BitmapEncoder.BitmapFormat.PNG);
    }

    /** The median and, in brackets, the lowest and highest round. */
    private static String withRange(List<Run> rs, java.util.function.ToDoubleFunction<Run> metric) {
        double[] v = rs.stream()
                .mapToDouble(metric)
                .filter(d -> !Double.isNaN(d))
                .sorted()
                .toArray();
        if (v.length == 0) {
            return "";
        }
        return String.format(Locale.ROOT, "%.1f (%.1f-%.1f)", median(rs, metric), v[0], v[v.length - 1]);
    }

    /** cosched's CPU per request over the variant's, in each round both ran: the median, then the rounds. */
    private static String ratios(List<Run> base, List<Run> rs) {
        if (base == null) {
            return "";
        }
        List<Double> r = new ArrayList<>();
        for (Run v : rs) {
            for (Run b : base) {
                if (b.round() == v.round() && !Double.isNaN(b.cpuPerRequest()) && v.cpuPerRequest() > 0) {
                    r.add(b.cpuPerRequest() / v.cpuPerRequest());
                }
            }
        }
        if (r.isEmpty()) {
            return "";
        }
        double[] sorted = r.stream().mapToDouble(Double::doubleValue).sorted().toArray();
        double m = sorted.length % 2 == 1
                ? sorted[sorted.length / 2]
                : (sorted[sorted.length / 2 - 1] + sorted[sorted.length / 2]) / 2;
        return String.format(
                Locale.ROOT,
                "%.2f (%s)",
                m,
                String.join(
                        ", ",
                        r.stream()
                                .map(x -> String.format(Locale.ROOT, "%.2f", x))
                                .toList()));
    }

    private static double median(List<Run> rs, java.util.function.ToDoubleFunction<Run> metric) {
        double[] v = rs.stream()
                .mapToDouble(metric)
                .filter(d -> !Double.isNaN(d))
                .sorted()
                .toArray();
        if (v.length == 0) {
            return Double.NaN;
        }
        return v.length % 2 == 1 ? v[v.length / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
    }

    private static String orBlank(double v) {
        return Double.isNaN(v) ? "" : String.format(Locale.ROOT, "%.1f", v);
    }

    static double num(String s) {
        return s.isEmpty() ? Double.NaN : Double.parseDouble(s);
    }
}
