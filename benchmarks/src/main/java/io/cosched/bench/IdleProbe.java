package io.cosched.bench;

import io.cosched.Coroutines;
import io.cosched.IOManager;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * What an IOManager costs when nothing happens, and how close to their word its sleeps wake:
 *
 * <ol>
 *   <li><b>idle</b>: a one-loop IOManager with its default stall watchdog, {@code parked} coroutines parked (as a
 *       stream's producer waits for its client) each with a timer 30 s out (as a stream's read timeout), nothing else;
 *       this JVM's CPU time (utime + stime, /proc/self/stat) and context switches per second over {@code seconds};
 *   <li><b>sleep</b>: on the same, otherwise idle loop, one coroutine sleeps 1, 2, 5 and 20 ms, 1,000 times each
 *       (200 for 20 ms); how long each sleep took, p50 / p99 / max, against the 10 % or 0.2 ms, whichever is
 *       larger, that a timer may be late by (issue 49); beside it the JDK's own timers on the same machine at the
 *       same time: {@code Thread.sleep} in a JDK virtual thread, {@code LockSupport.parkNanos} on a platform one.
 * </ol>
 *
 * Run it with the carrier flags (benchmarks/idle.sh does; a third argument, a stall threshold such as PT0S, sets
 * the watchdog's):
 *
 * <pre>java --add-opens java.base/java.lang=ALL-UNNAMED -cp benchmarks.jar io.cosched.bench.IdleProbe [parked] [seconds]</pre>
 */
public final class IdleProbe {

    private static final long TICKS_PER_SECOND = 100; // USER_HZ on Linux

    private IdleProbe() {}

    public static void main(String[] args) throws Exception {
        int parked = args.length > 0 ? Integer.parseInt(args[0]) : 1000;
        int seconds = args.length > 1 ? Integer.parseInt(args[1]) : 20;
        var builder = IOManager.builder().name("idle").threads(1);
        if (args.length > 2) {
            builder.stallThreshold(Duration.parse(args[2])); // PT0S: no watchdog
        }
        try (IOManager io = builder.build()) {
            io.start();
            CountDownLatch release = new CountDownLatch(1);
            CountDownLatch allParked = new CountDownLatch(parked);
            for (int i = 0; i < parked; i++) {
                io.spawn(() -> {
                    var readTimeout = io.timers().addTimer(Duration.ofSeconds(30), () -> {});
                    allParked.countDown();
                    release.await();
                    readTimeout.cancel();
                    return null;
                });
            }
            if (!allParked.await(30, TimeUnit.SECONDS)) {
                throw new IllegalStateException("the coroutines did not all park");
            }
            io.spawn(() -> sleeps(Duration.ofMillis(1), 1000, Coroutines::sleep))
                    .join(); // the sleep path warm, before the idle window
            LockSupport.parkNanos(TimeUnit.SECONDS.toNanos(2)); // what the start left behind settles
            long cpu = cpuTicks();
            long switches = TimedWaits.contextSwitches();
            long started = System.nanoTime();
            LockSupport.parkNanos(TimeUnit.SECONDS.toNanos(seconds));
            double took = (System.nanoTime() - started) / 1e9;
            double cpuMs = (cpuTicks() - cpu) * (1000.0 / TICKS_PER_SECOND);
            long cs = TimedWaits.contextSwitches() - switches;
            System.out.printf(
                    "idle, %d parked coroutines with a 30 s timer each, %.1f s: %.2f ms CPU a second, %.1f context "
                            + "switches a second%n",
                    parked, took, cpuMs / took, cs / took);
            System.out.printf(
                    "%-44s %8s %10s %10s %10s %10s%n", "sleep", "sleeps", "p50 ms", "p99 ms", "max ms", "bound");
            for (int ms : new int[] {1, 2, 5, 20}) {
                int n = ms >= 20 ? 200 : 1000;
                Duration d = Duration.ofMillis(ms);
                row(
                        "Coroutines.sleep(" + ms + " ms), coroutine",
                        ms,
                        io.spawn(() -> sleeps(d, n, Coroutines::sleep)).join());
                // the peers, on the same machine at the same time: the JDK's own timers
                row(
                        "Thread.sleep(" + ms + " ms), JDK virtual thread",
                        ms,
                        virtualThread(() -> sleeps(d, n, Thread::sleep)));
                row(
                        "LockSupport.parkNanos(" + ms + " ms), platform",
                        ms,
                        sleeps(d, n, x -> LockSupport.parkNanos(x.toNanos())));
            }
            release.countDown();
        }
    }

    private interface Sleep {
        void sleep(Duration d) throws InterruptedException;
    }

    private static void row(String what, int ms, long[] took) {
        Arrays.sort(took);
        int n = took.length;
        System.out.printf(
                "%-44s %8d %10.3f %10.3f %10.3f %10.3f%n",
                what,
                n,
                took[n / 2] / 1e6,
                took[(int) (n * 0.99)] / 1e6,
                took[n - 1] / 1e6,
                Math.max(ms * 1.1, ms + 0.2));
    }

    /** {@code n} sleeps of {@code d} on the calling thread: how long each took, in nanoseconds. */
    private static long[] sleeps(Duration d, int n, Sleep sleep) throws InterruptedException {
        long[] took = new long[n];
        for (int i = 0; i < n; i++) {
            long t0 = System.nanoTime();
            sleep.sleep(d);
            took[i] = System.nanoTime() - t0;
        }
        return took;
    }

    private static long[] virtualThread(java.util.concurrent.Callable<long[]> task) throws Exception {
        java.util.concurrent.FutureTask<long[]> f = new java.util.concurrent.FutureTask<>(task);
        Thread.ofVirtual().start(f);
        return f.get();
    }

    /** utime + stime of this JVM, in clock ticks. */
    private static long cpuTicks() throws IOException {
        String stat = Files.readString(Path.of("/proc/self/stat"));
        List<String> fields = new ArrayList<>(
                Arrays.asList(stat.substring(stat.lastIndexOf(')') + 2).split(" ")));
        // fields 14 and 15 of stat, counted from 1; here the list starts at field 3
        return Long.parseLong(fields.get(11)) + Long.parseLong(fields.get(12));
    }
}
