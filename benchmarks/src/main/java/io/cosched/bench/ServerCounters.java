package io.cosched.bench;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Pattern;

/**
 * A server process's counters at one instant, read from /proc: its CPU time in clock ticks (utime + stime, threads
 * that ended included) and per thread id its group (its name with digits as '#'), CPU ticks, voluntary and
 * involuntary context switches. What the load generators read around a counted window.
 */
record ServerCounters(long ticks, Map<String, ThreadCounters> threads) {

    record ThreadCounters(String group, long[] counts) {}

    private static final Pattern DIGITS = Pattern.compile("[0-9]");

    static ServerCounters read(long pid) {
        try {
            long ticks = utimeStime(Files.readString(Path.of("/proc/" + pid + "/stat")));
            Map<String, ThreadCounters> threads = new TreeMap<>();
            try (var tasks = Files.list(Path.of("/proc/" + pid + "/task"))) {
                for (Path t : (Iterable<Path>) tasks::iterator) {
                    try {
                        String stat = Files.readString(t.resolve("stat"));
                        String group = DIGITS.matcher(stat.substring(stat.indexOf('(') + 1, stat.lastIndexOf(')')))
                                .replaceAll("#");
                        long[] c = new long[3];
                        c[0] = utimeStime(stat);
                        for (String line : Files.readAllLines(t.resolve("status"))) {
                            int i = line.startsWith("voluntary_ctxt_switches")
                                    ? 1
                                    : line.startsWith("nonvoluntary_ctxt_switches") ? 2 : 0;
                            if (i > 0) {
                                c[i] = Long.parseLong(
                                        line.substring(line.indexOf(':') + 1).trim());
                            }
                        }
                        threads.put(t.getFileName().toString(), new ThreadCounters(group, c));
                    } catch (IOException gone) {
                        // a thread that ended while the directory was read: not counted
                    }
                }
            }
            return new ServerCounters(ticks, threads);
        } catch (IOException e) {
            throw new UncheckedIOException("--server-pid=" + pid + ": cannot read its /proc entries", e);
        }
    }

    /**
     * Per group of threads, what its threads did between the two readings: a thread alive at the end counts from its
     * first reading, or from nothing when it started in between. A thread that ended in between is not counted (its
     * switches leave /proc with it; before, such a thread made a group's and the process's switches negative).
     */
    static Map<String, long[]> groupDeltas(ServerCounters start, ServerCounters end) {
        Map<String, long[]> groups = new TreeMap<>();
        end.threads().forEach((tid, e) -> {
            ThreadCounters s = start.threads().get(tid);
            long[] g = groups.computeIfAbsent(e.group(), k -> new long[3]);
            for (int i = 0; i < 3; i++) {
                g[i] += e.counts()[i] - (s == null ? 0 : s.counts()[i]);
            }
        });
        return groups;
    }

    /** The context switches of every thread, voluntary and not, since {@code start}, as {@link #groupDeltas} counts them. */
    long switchesSince(ServerCounters start) {
        return groupDeltas(start, this).values().stream()
                .mapToLong(d -> d[1] + d[2])
                .sum();
    }

    /** utime + stime of a /proc stat line: fields 14 and 15, counted after the name in parentheses (field 2). */
    private static long utimeStime(String stat) {
        String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
        return Long.parseLong(f[11]) + Long.parseLong(f[12]);
    }
}
