package io.cosched.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * A server's system calls and context switches per request, from {@code perf stat -x,} over the
 * {@code syscalls:sys_enter_*} and {@code sched:sched_switch} tracepoints (written by the benchmark's
 * {@code bench_fixed_rate} with {@code BENCH_SYSCALLS=1}).
 *
 * <pre>java -cp benchmarks.jar io.cosched.bench.SyscallCounts PERF_CSV REQUESTS</pre>
 *
 * Prints the calls made at least once every hundred requests, most frequent first, per request, then
 * all calls and the switches per request.
 */
public final class SyscallCounts {

    private static final String ENTER = "syscalls:sys_enter_";
    private static final String SWITCH = "sched:sched_switch";

    private SyscallCounts() {}

    record Count(String name, long count) {}

    public static void main(String[] args) throws IOException {
        if (args.length != 2) {
            System.err.println("usage: SyscallCounts PERF_CSV REQUESTS");
            System.exit(2);
        }
        double requests = Double.parseDouble(args[1]);
        if (!(requests > 0)) {
            throw new IllegalArgumentException("REQUESTS: " + args[1] + " (expected: > 0)");
        }
        System.out.print(render(parse(Files.readAllLines(Path.of(args[0]))), requests));
    }

    /** The counted events of {@code perf stat -x,} lines: "count,unit,event,..."; comments and uncounted ones skipped. */
    static List<Count> parse(List<String> lines) {
        List<Count> counts = new ArrayList<>();
        for (String line : lines) {
            if (line.isBlank() || line.startsWith("#")) {
                continue;
            }
            String[] f = line.split(",", -1);
            if (f.length < 3 || !f[0].matches("\\d+")) {
                continue; // "<not counted>", "<not supported>"
            }
            counts.add(new Count(f[2], Long.parseLong(f[0])));
        }
        return counts;
    }

    static String render(List<Count> counts, double requests) {
        StringBuilder sb = new StringBuilder();
        sb.append(String.format(Locale.ROOT, "per request, over %.0f requests%n", requests));
        long calls = 0;
        long switches = -1;
        List<Count> shown = new ArrayList<>();
        for (Count c : counts) {
            if (c.name().equals(SWITCH)) {
                switches = c.count();
            } else if (c.name().startsWith(ENTER)) {
                calls += c.count();
                if (c.count() >= requests / 100) {
                    shown.add(c);
                }
            }
        }
        shown.sort((a, b) -> Long.compare(b.count(), a.count()));
        for (Count c : shown) {
            sb.append(String.format(
                    Locale.ROOT, "%10.3f  %s%n", c.count() / requests, c.name().substring(ENTER.length())));
        }
        sb.append(String.format(Locale.ROOT, "%10.3f  all system calls%n", calls / requests));
        if (switches >= 0) {
            sb.append(String.format(Locale.ROOT, "%10.3f  context switches (sched_switch)%n", switches / requests));
        }
        return sb.toString();
    }
}
