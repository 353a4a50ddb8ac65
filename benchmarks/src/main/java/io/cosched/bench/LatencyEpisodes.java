package io.cosched.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.OffsetDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Where a fixed-rate run's tail comes from: reads LoadGen's {@code --latency-log} (every answer: when it was due,
 * its latency) and, optionally, the server's GC log ({@code -Xlog:gc:file=...:time}), and prints the episodes in
 * which requests were slow (latency over the run's p98, due within 5 ms of each other), each with its size, its
 * worst latency, the GC pauses that fell in it, and the slope of latency over due time of every answer due inside it. The slope says
 * how a backlog was served: a server that finishes the oldest request first (first in, first out) gives about
 * {@code rho - 1} (rho the load, -0.4 at 60 %), one that advances every request of the backlog together and
 * finishes them all at its end gives about -1.
 *
 * <pre>LatencyEpisodes &lt;latency.csv&gt; [gc.log]</pre>
 */
public final class LatencyEpisodes {

    private static final Pattern GC_PAUSE =
            Pattern.compile("^\\[([^]]+)].*GC\\(\\d+\\) (Pause [^(]*\\([^)]*\\)).* ([0-9.]+)ms$");
    private static final DateTimeFormatter GC_TIME = DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSSZ");
    private static final double GAP_MS = 5;

    private LatencyEpisodes() {}

    record Answer(double due, double latency) {}

    record Pause(double start, double ms, String kind) {}

    public static void main(String[] args) throws IOException {
        if (args.length < 1 || args.length > 2) {
            throw new IllegalArgumentException(
                    "arguments: " + Arrays.toString(args) + " (expected: <latency.csv> [gc.log])");
        }
        List<Answer> answers = new ArrayList<>();
        for (String line : Files.readAllLines(Path.of(args[0]))) {
            if (line.isEmpty() || line.startsWith("due")) {
                continue;
            }
            String[] f = line.split(",");
            answers.add(new Answer(Double.parseDouble(f[0]), Double.parseDouble(f[1])));
        }
        List<Pause> pauses = args.length > 1 ? pauses(Path.of(args[1])) : List.of();
        System.out.print(report(answers, pauses));
    }

    static List<Pause> pauses(Path gcLog) throws IOException {
        List<Pause> pauses = new ArrayList<>();
        for (String line : Files.readAllLines(gcLog)) {
            Matcher m = GC_PAUSE.matcher(line);
            if (m.find()) {
                double end =
                        OffsetDateTime.parse(m.group(1), GC_TIME).toInstant().toEpochMilli();
                double ms = Double.parseDouble(m.group(3));
                // the line is written when the pause ends
                pauses.add(new Pause(end - ms, ms, m.group(2).trim()));
            }
        }
        return pauses;
    }

    static String report(List<Answer> answers, List<Pause> pauses) {
        if (answers.isEmpty()) {
            return "no answers\n";
        }
        List<Answer> byDue = new ArrayList<>(answers);
        byDue.sort((a, b) -> Double.compare(a.due(), b.due()));
        double[] lat = byDue.stream().mapToDouble(Answer::latency).sorted().toArray();
        double p50 = lat[(int) (0.50 * (lat.length - 1))];
        double p98 = lat[(int) (0.98 * (lat.length - 1))];
        double p99 = lat[(int) (0.99 * (lat.length - 1))];
        double first = byDue.get(0).due();
        double last = byDue.get(byDue.size() - 1).due();
        StringBuilder sb = new StringBuilder();
        sb.append(String.format(
                Locale.ROOT,
                "%d answers over %.1f s; p50 %.2f ms, p98 %.2f ms, p99 %.2f ms; %d GC pauses in the log%n",
                byDue.size(),
                (last - first) / 1000,
                p50,
                p98,
                p99,
                pauses.size()));
        sb.append("episode (s after the first due) | answers over p98 | worst ms | slope | GC pauses in it\n");
        int slowInEpisodesWithGc = 0;
        int slow = 0;
        List<Double> slopes = new ArrayList<>();
        int i = 0;
        while (i < byDue.size()) {
            if (byDue.get(i).latency() <= p98) {
                i++;
                continue;
            }
            List<Answer> ep = new ArrayList<>(); // the slow ones
            List<Answer> all = new ArrayList<>(); // every answer due from the first slow one to the last
            double lastDue = byDue.get(i).due();
            for (; i < byDue.size() && byDue.get(i).due() - lastDue <= GAP_MS; i++) {
                all.add(byDue.get(i));
                if (byDue.get(i).latency() > p98) {
                    ep.add(byDue.get(i));
                    lastDue = byDue.get(i).due();
                }
            }
            double cut = lastDue;
            all.removeIf(a -> a.due() > cut);
            double start = ep.get(0).due();
            double worst = ep.stream().mapToDouble(Answer::latency).max().orElse(0);
            double end =
                    ep.stream().mapToDouble(a -> a.due() + a.latency()).max().orElse(start);
            List<Pause> in = pauses.stream()
                    .filter(p -> p.start() + p.ms() >= start - 1 && p.start() <= end)
                    .toList();
            double slope = slope(all);
            slow += ep.size();
            if (!in.isEmpty()) {
                slowInEpisodesWithGc += ep.size();
            }
            if (ep.size() >= 3) {
                slopes.add(slope);
            }
            sb.append(String.format(
                    Locale.ROOT,
                    "%.3f | %d | %.1f | %s | %s%n",
                    (start - first) / 1000,
                    ep.size(),
                    worst,
                    ep.size() >= 3 ? String.format(Locale.ROOT, "%.2f", slope) : "-",
                    in.isEmpty()
                            ? "none"
                            : String.join(
                                    ", ",
                                    in.stream()
                                            .map(p -> String.format(Locale.ROOT, "%.1f ms %s", p.ms(), p.kind()))
                                            .toList())));
        }
        double[] s = slopes.stream().mapToDouble(Double::doubleValue).sorted().toArray();
        sb.append(String.format(
                Locale.ROOT,
                "answers over p98 in an episode with a GC pause: %d of %d; median slope of episodes of 3 or more: %s%n",
                slowInEpisodesWithGc,
                slow,
                s.length == 0 ? "-" : String.format(Locale.ROOT, "%.2f", s[s.length / 2])));
        return sb.toString();
    }

    /** Least squares slope of latency over due time. */
    static double slope(List<Answer> ep) {
        double n = ep.size();
        double mx = ep.stream().mapToDouble(Answer::due).sum() / n;
        double my = ep.stream().mapToDouble(Answer::latency).sum() / n;
        double sxy = 0;
        double sxx = 0;
        for (Answer a : ep) {
            sxy += (a.due() - mx) * (a.latency() - my);
            sxx += (a.due() - mx) * (a.due() - mx);
        }
        return sxx == 0 ? 0 : sxy / sxx;
    }
}
