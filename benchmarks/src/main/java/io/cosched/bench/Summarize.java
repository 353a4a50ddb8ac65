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
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectMapper;
import tools.jackson.databind.json.JsonMapper;

/**
 * Turns a JMH JSON result and footprint lines into the markdown tables of docs/benchmark-results.md.
 * Each score is the median over forks of each fork's mean; each peer is shown as its speed
 * relative to the cosched row of the same benchmark (above 1: faster than cosched).
 *
 * <p>Usage: {@code Summarize <jmh.json> [footprint.txt]}
 */
public final class Summarize {

    /** Which row of each benchmark is cosched: the others are compared with it. */
    private static final Map<String, String> BASELINE = Map.of(
            "SpawnBenchmark.spawnToCompletion", "iomanager-inside",
            "ParkResumeBenchmark", "cosched",
            "TimerBenchmark", "coschedOnLoop");

    record Row(
            String group, String label, double median, double min, double max, String unit, boolean higherIsBetter) {}

    public static void main(String[] args) throws IOException {
        ObjectMapper mapper = JsonMapper.builder().build();
        JsonNode results = mapper.readTree(Path.of(args[0]).toFile());
        Map<String, List<Row>> groups = new LinkedHashMap<>();
        for (JsonNode r : results) {
            String full = r.get("benchmark").asString();
            String simple = full.substring(full.lastIndexOf('.', full.lastIndexOf('.') - 1) + 1); // Class.method
            String className = simple.substring(0, simple.indexOf('.'));
            String method = simple.substring(simple.indexOf('.') + 1);
            JsonNode params = r.get("params");
            String group;
            String label;
            if (params != null && params.has("runner")) {
                group = simple;
                label = params.get("runner").asString();
            } else {
                group = className;
                label = method;
            }
            JsonNode metric = r.get("primaryMetric");
            double[] forkMeans = forkMeans(metric.get("rawData"));
            String unit = metric.get("scoreUnit").asString();
            boolean higher = !"avgt".equals(r.get("mode").asString());
            groups.computeIfAbsent(group, g -> new ArrayList<>())
                    .add(new Row(group, label, median(forkMeans), min(forkMeans), max(forkMeans), unit, higher));
        }
        StringBuilder md = new StringBuilder();
        for (Map.Entry<String, List<Row>> e : groups.entrySet()) {
            String baselineLabel = BASELINE.get(e.getKey());
            Row base = e.getValue().stream()
                    .filter(r -> r.label().equals(baselineLabel))
                    .findFirst()
                    .orElse(null);
            md.append("\n#### ").append(e.getKey()).append("\n\n");
            md.append("| variant | median | fork range | unit | speed vs cosched |\n|---|---:|---:|---|---:|\n");
            for (Row r : e.getValue()) {
                String ratio = base == null
                        ? ""
                        : String.format(
                                Locale.ROOT,
                                "%.2f×",
                                r.higherIsBetter() ? r.median() / base.median() : base.median() / r.median());
                md.append(String.format(
                        Locale.ROOT,
                        "| %s%s | %s | %s – %s | %s | %s |%n",
                        r.label(),
                        r == base && !r.label().equals("cosched") ? " (cosched)" : "",
                        fmt(r.median()),
                        fmt(r.min()),
                        fmt(r.max()),
                        r.unit(),
                        ratio));
            }
        }
        if (args.length > 1) {
            md.append("\n#### Heap per parked coroutine\n\n| variant | median bytes | runs |\n|---|---:|---|\n");
            Map<String, List<Long>> byRunner = new LinkedHashMap<>();
            for (String line : Files.readAllLines(Path.of(args[1]))) {
                if (line.startsWith("runner=")) {
                    Map<String, String> kv = new LinkedHashMap<>();
                    for (String part : line.trim().split(" ")) {
                        String[] p = part.split("=", 2);
                        kv.put(p[0], p[1]);
                    }
                    byRunner.computeIfAbsent(kv.get("runner"), k -> new ArrayList<>())
                            .add(Long.parseLong(kv.get("bytesPerParked")));
                }
            }
            for (Map.Entry<String, List<Long>> e : byRunner.entrySet()) {
                double[] v =
                        e.getValue().stream().mapToDouble(Long::doubleValue).toArray();
                md.append(String.format(Locale.ROOT, "| %s | %.0f | %s |%n", e.getKey(), median(v), e.getValue()));
            }
        }
        System.out.print(md);
    }

    private static double[] forkMeans(JsonNode rawData) {
        double[] means = new double[rawData.size()];
        for (int f = 0; f < rawData.size(); f++) {
            JsonNode iterations = rawData.get(f);
            double sum = 0;
            for (JsonNode it : iterations) {
                sum += it.asDouble();
            }
            means[f] = sum / iterations.size();
        }
        return means;
    }

    static double median(double[] v) {
        double[] s = v.clone();
        Arrays.sort(s);
        int n = s.length;
        return n % 2 == 1 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
    }

    private static double min(double[] v) {
        return Arrays.stream(v).min().orElse(Double.NaN);
    }

    private static double max(double[] v) {
        return Arrays.stream(v).max().orElse(Double.NaN);
    }

    private static String fmt(double v) {
        if (v >= 1_000_000) {
            return String.format(Locale.ROOT, "%.2f M", v / 1_000_000);
        }
        if (v >= 10_000) {
            return String.format(Locale.ROOT, "%.0f k", v / 1_000);
        }
        return String.format(Locale.ROOT, "%.1f", v);
    }
}
