package io.cosched.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.ToDoubleFunction;

/**
 * Turns {@code runs.csv} of {@code benchmarks/stream.sh} into summary.md: per scenario, the medians over rounds
 * with the range of the first figure (CPU per event or per MiB), each variant's CPU per unit over the reactive
 * variant's round by round, and the targets checked for every variant.
 *
 * <pre>StreamSummary &lt;results-dir&gt;</pre>
 */
public final class StreamSummary {

    private static final String BASELINE = "reactive";

    /** The targets' bounds, as the issue states them or, where it says "flat", as this benchmark reads it. */
    private static final double MAX_UPLOAD_HEAP_GROWTH_MB = 64;

    private static final double MAX_CPU_RATIO = 1.1;
    private static final double MAX_FLAT_HEAP_GROWTH_MB = 8;

    private StreamSummary() {}

    /** One line of runs.csv, its fields by column name (blank fields are NaN). */
    record Run(Map<String, String> f) {

        double num(String column) {
            String v = f.get(column);
            return v == null || v.isEmpty() ? Double.NaN : Double.parseDouble(v);
        }

        String str(String column) {
            return f.getOrDefault(column, "");
        }

        int round() {
            return (int) num("round");
        }
    }

    public static void main(String[] args) throws IOException {
        Path dir = Path.of(args[0]);
        List<String> lines = Files.readAllLines(dir.resolve("runs.csv"));
        String[] header = lines.get(0).split(",", -1);
        Map<String, Map<String, List<Run>>> cells = new LinkedHashMap<>();
        for (String line : lines.subList(1, lines.size())) {
            String[] v = line.split(",", -1);
            Map<String, String> f = new HashMap<>();
            for (int i = 0; i < header.length && i < v.length; i++) {
                f.put(header[i], v[i]);
            }
            Run r = new Run(f);
            cells.computeIfAbsent(r.str("scenario"), k -> new LinkedHashMap<>())
                    .computeIfAbsent(r.str("variant"), k -> new ArrayList<>())
                    .add(r);
        }
        StringBuilder md = new StringBuilder();
        md.append(
                "Medians over rounds, the server JVM's figures over each measured window. \"CPU\" is its user + system "
                        + "time per event or per MiB, the lowest and highest round in brackets; \"/ reactive\" divides a variant's "
                        + "CPU per unit by the reactive variant's in the same round (median, then the rounds); \"alloc\" is the heap "
                        + "allocated per unit (from eden's use between jstat samples); \"live heap\" is the heap after a full GC "
                        + "at the window's start and end; \"peak growth\" is the highest used heap during the window (garbage not "
                        + "yet collected included) over the live heap at its start; \"RSS growth\" is the peak RSS over the RSS at "
                        + "the start; \"load CPU\" is the load generator's CPU over the window in percent of its one core: near 100, the "
                        + "client sets the rate, and the server's CPU per unit is the figure to compare.\n");
        for (Map.Entry<String, Map<String, List<Run>>> scenario : cells.entrySet()) {
            String name = scenario.getKey();
            Map<String, List<Run>> byVariant = scenario.getValue();
            Run first = byVariant.values().iterator().next().get(0);
            md.append("\n### ")
                    .append(name)
                    .append(" (")
                    .append((int) first.num("connections"))
                    .append(" connection")
                    .append(first.num("connections") == 1 ? "" : "s")
                    .append(")\n\n");
            if (name.startsWith("sse")) {
                md.append(
                                "| variant | CPU us/event | / reactive | events/s | produced/s | switches/event | alloc KB/event "
                                        + "| live heap MB | peak growth MB | RSS growth MB | producers at end | ids skipped | failed | stalls | settle s | load CPU % |\n")
                        .append("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
                for (Map.Entry<String, List<Run>> e : byVariant.entrySet()) {
                    List<Run> rs = e.getValue();
                    md.append(String.format(
                            Locale.ROOT,
                            "| %s | %s | %s | %,.0f | %,.0f | %.3f | %.2f | %s | %.1f | %.1f | %s | %s | %s | %s | %s | %s |%n",
                            e.getKey(),
                            withRange(rs, "cpu_us_per_unit", "%.2f"),
                            ratios(byVariant.get(BASELINE), rs),
                            median(rs, "rate"),
                            median(rs, "produced_per_s"),
                            median(rs, "cs_per_unit"),
                            median(rs, "alloc_kb_per_unit"),
                            liveHeap(rs),
                            median(rs, "peak_heap_growth_mb"),
                            median(rs, "rss_growth_mb"),
                            minOf(rs, "producers_end"),
                            sum(rs, "skipped"),
                            sum(rs, "failed"),
                            sum(rs, "stalls"),
                            orBlank(median(rs, "settle_s"), "%.0f"),
                            orBlank(median(rs, "load_cpu_pct"), "%.0f")));
                }
            } else {
                md.append("| variant | CPU us/MiB | / reactive | MiB/s | switches/MiB | alloc KB/MiB | live heap MB "
                                + "| peak growth MB | old gen growth MB | RSS growth MB | failed | load CPU % |\n")
                        .append("|---|---|---|---|---|---|---|---|---|---|---|---|\n");
                for (Map.Entry<String, List<Run>> e : byVariant.entrySet()) {
                    List<Run> rs = e.getValue();
                    md.append(String.format(
                            Locale.ROOT,
                            "| %s | %s | %s | %,.0f | %.2f | %.1f | %s | %.1f | %.1f | %.1f | %s | %s |%n",
                            e.getKey(),
                            withRange(rs, "cpu_us_per_unit", "%.0f"),
                            ratios(byVariant.get(BASELINE), rs),
                            median(rs, "rate"),
                            median(rs, "cs_per_unit"),
                            median(rs, "alloc_kb_per_unit"),
                            liveHeap(rs),
                            median(rs, "peak_heap_growth_mb"),
                            median(rs, "old_growth_mb"),
                            median(rs, "rss_growth_mb"),
                            sum(rs, "failed"),
                            orBlank(median(rs, "load_cpu_pct"), "%.0f")));
                }
            }
        }
        md.append(targets(cells));
        System.out.print(md);
    }

    /** The targets, checked for every variant (they are cosched's; the others show where the bar is). */
    private static String targets(Map<String, Map<String, List<Run>>> cells) {
        List<String> variants = new ArrayList<>();
        cells.values()
                .forEach(m -> m.keySet().forEach(v -> {
                    if (!variants.contains(v)) {
                        variants.add(v);
                    }
                }));
        StringBuilder md = new StringBuilder("\n### Targets\n\n| target |");
        variants.forEach(v -> md.append(' ').append(v).append(" |"));
        md.append("\n|---|").append("---|".repeat(variants.size())).append('\n');
        Map<String, List<Run>> upload = cells.getOrDefault("upload-1g", Map.of());
        Map<String, List<Run>> upload100 = cells.getOrDefault("upload", Map.of());
        Map<String, List<Run>> sse = cells.getOrDefault("sse-slow", Map.of());
        row(
                md,
                variants,
                String.format(
                        Locale.ROOT,
                        "1 GiB upload: peak heap growth < %.0f MB (garbage included; highest round)",
                        MAX_UPLOAD_HEAP_GROWTH_MB),
                upload,
                rs -> check(
                        maxOf(rs, "peak_heap_growth_mb"),
                        "%.1f MB",
                        maxOf(rs, "peak_heap_growth_mb") < MAX_UPLOAD_HEAP_GROWTH_MB));
        cpuRow(md, variants, "1 GiB upload", upload);
        cpuRow(md, variants, "100 MiB uploads", upload100);
        row(
                md,
                variants,
                "SSE slow clients: producers park (events made/s <= 1.1x events taken/s, every round)",
                sse,
                rs -> {
                    double worst = rs.stream()
                            .mapToDouble(r -> r.num("produced_per_s") / r.num("rate"))
                            .max()
                            .orElse(Double.NaN);
                    return check(worst, "%.2fx", worst <= 1.1);
                });
        row(
                md,
                variants,
                String.format(
                        Locale.ROOT,
                        "SSE slow clients: live heap flat over the window (growth <= %.0f MB, highest round)",
                        MAX_FLAT_HEAP_GROWTH_MB),
                sse,
                rs -> {
                    double g = rs.stream()
                            .mapToDouble(r -> r.num("heap_end_mb") - r.num("heap_start_mb"))
                            .max()
                            .orElse(Double.NaN);
                    return check(g, "%+.1f MB", g <= MAX_FLAT_HEAP_GROWTH_MB);
                });
        row(
                md,
                variants,
                "SSE slow clients: no event lost, no stream cut (ids skipped / failed connections / producers gone)",
                sse,
                rs -> {
                    double skipped = sumOf(rs, "skipped");
                    double failed = sumOf(rs, "failed");
                    double gone = rs.stream()
                            .mapToDouble(r -> r.num("connections") - r.num("producers_end"))
                            .sum();
                    return verdict(
                            String.format(Locale.ROOT, "%.0f / %.0f / %.0f", skipped, failed, gone),
                            skipped + failed + gone == 0);
                });
        return md.toString();
    }

    private static void row(
            StringBuilder md,
            List<String> variants,
            String target,
            Map<String, List<Run>> cell,
            java.util.function.Function<List<Run>, String> verdict) {
        md.append("| ").append(target).append(" |");
        for (String v : variants) {
            List<Run> rs = cell.get(v);
            md.append(' ')
                    .append(rs == null || rs.isEmpty() ? "" : verdict.apply(rs))
                    .append(" |");
        }
        md.append('\n');
    }

    private static void cpuRow(StringBuilder md, List<String> variants, String scenario, Map<String, List<Run>> cell) {
        row(
                md,
                variants,
                String.format(
                        Locale.ROOT,
                        "%s: CPU per MiB <= %.1fx reactive's (median of the rounds' ratios)",
                        scenario,
                        MAX_CPU_RATIO),
                cell,
                rs -> {
                    double r = medianRatio(cell.get(BASELINE), rs);
                    return Double.isNaN(r) ? "" : check(r, "%.2fx", r <= MAX_CPU_RATIO);
                });
    }

    private static String check(double value, String format, boolean met) {
        return Double.isNaN(value) ? "" : verdict(String.format(Locale.ROOT, format, value), met);
    }

    private static String verdict(String shown, boolean met) {
        return shown + (met ? " met" : " **not met**");
    }

    /** The live heap at the window's start and end: medians, "start -> end". */
    private static String liveHeap(List<Run> rs) {
        return String.format(Locale.ROOT, "%.1f -> %.1f", median(rs, "heap_start_mb"), median(rs, "heap_end_mb"));
    }

    /** The median and, in brackets, the lowest and highest round. */
    private static String withRange(List<Run> rs, String column, String format) {
        double[] v = values(rs, r -> r.num(column));
        if (v.length == 0) {
            return "";
        }
        return String.format(
                Locale.ROOT, format + " (" + format + "-" + format + ")", median(v), v[0], v[v.length - 1]);
    }

    /** The variant's CPU per unit over the baseline's, in each round both ran: the median, then the rounds. */
    private static String ratios(List<Run> base, List<Run> rs) {
        List<Double> r = roundRatios(base, rs);
        if (r.isEmpty()) {
            return "";
        }
        return String.format(
                Locale.ROOT,
                "%.2f (%s)",
                median(r.stream().mapToDouble(Double::doubleValue).sorted().toArray()),
                String.join(
                        ", ",
                        r.stream()
                                .map(x -> String.format(Locale.ROOT, "%.2f", x))
                                .toList()));
    }

    private static double medianRatio(List<Run> base, List<Run> rs) {
        List<Double> r = roundRatios(base, rs);
        return r.isEmpty()
                ? Double.NaN
                : median(r.stream().mapToDouble(Double::doubleValue).sorted().toArray());
    }

    private static List<Double> roundRatios(List<Run> base, List<Run> rs) {
        List<Double> r = new ArrayList<>();
        if (base == null) {
            return r;
        }
        for (Run v : rs) {
            for (Run b : base) {
                if (b.round() == v.round() && b.num("cpu_us_per_unit") > 0 && !Double.isNaN(v.num("cpu_us_per_unit"))) {
                    r.add(v.num("cpu_us_per_unit") / b.num("cpu_us_per_unit"));
                }
            }
        }
        return r;
    }

    private static double median(List<Run> rs, String column) {
        return median(values(rs, r -> r.num(column)));
    }

    private static double median(double[] sorted) {
        if (sorted.length == 0) {
            return Double.NaN;
        }
        int n = sorted.length;
        return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    }

    private static double maxOf(List<Run> rs, String column) {
        double[] v = values(rs, r -> r.num(column));
        return v.length == 0 ? Double.NaN : v[v.length - 1];
    }

    private static String minOf(List<Run> rs, String column) {
        double[] v = values(rs, r -> r.num(column));
        return v.length == 0 ? "" : String.format(Locale.ROOT, "%.0f", v[0]);
    }

    private static String sum(List<Run> rs, String column) {
        double[] v = values(rs, r -> r.num(column));
        return v.length == 0
                ? ""
                : String.format(Locale.ROOT, "%.0f", Arrays.stream(v).sum());
    }

    private static double sumOf(List<Run> rs, String column) {
        return Arrays.stream(values(rs, r -> r.num(column))).sum();
    }

    private static double[] values(List<Run> rs, ToDoubleFunction<Run> metric) {
        return rs.stream()
                .mapToDouble(metric)
                .filter(d -> !Double.isNaN(d))
                .sorted()
                .toArray();
    }

    private static String orBlank(double v, String format) {
        return Double.isNaN(v) ? "" : String.format(Locale.ROOT, format, v);
    }
}
