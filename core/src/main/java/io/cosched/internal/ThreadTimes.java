package io.cosched.internal;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.jspecify.annotations.Nullable;

/**
 * Where a carrier thread's time went, for telling a carrier stuck in a task from one the OS did not
 * run: CPU time, and on Linux the time it waited in a run queue for a CPU
 * ({@code /proc/self/task/<tid>/schedstat}, both from one read). Tests substitute their own.
 */
@FunctionalInterface
interface ThreadTimes {

    long UNKNOWN = -1;

    /**
     * CPU time used and run-queue wait of a carrier's thread so far (either may be {@link #UNKNOWN}), and whether it
     * is runnable now: on a CPU, or waiting in a run queue for one. Linux adds a wait in the run queue to
     * {@code schedstat} only once the thread gets its CPU, so a thread woken (out of {@code epoll_wait}, say) and still
     * waiting shows neither CPU nor run-queue time yet: only its state says it waits for a CPU.
     */
    record Sample(long cpuNanos, long runQueueNanos, boolean runnable) {

        /** Without a state: as for a thread asleep. */
        Sample(long cpuNanos, long runQueueNanos) {
            this(cpuNanos, runQueueNanos, false);
        }
    }

    Sample sample(Carrier carrier);

    /** Times in which every carrier burns CPU all the time {@code ticker} says passes, and never waits for one. */
    static ThreadTimes burning(Ticker ticker) {
        return carrier -> new Sample(ticker.nanoTime(), 0);
    }

    ThreadTimes SYSTEM = new ThreadTimes() {
        // Looked up on first use: the management classes are only needed once a carrier looks stuck.
        private volatile @Nullable ThreadMXBean threads;

        @Override
        public Sample sample(Carrier carrier) {
            Sample s = schedstat(carrier.osThreadId());
            return s != null ? s : new Sample(cpuFromManagement(carrier.thread()), UNKNOWN);
        }

        private long cpuFromManagement(@Nullable Thread t) {
            if (t == null || t.isVirtual()) {
                return UNKNOWN;
            }
            ThreadMXBean mx = threads;
            if (mx == null) {
                threads = mx = ManagementFactory.getThreadMXBean();
            }
            return mx.isThreadCpuTimeSupported() ? Math.max(UNKNOWN, mx.getThreadCpuTime(t.threadId())) : UNKNOWN;
        }
    };

    /** The calling thread's id in the OS (Linux: from {@code /proc/thread-self}), or {@link #UNKNOWN}. */
    static long currentOsThreadId() {
        try {
            // "<pid>/task/<tid>"
            String link = Files.readSymbolicLink(Path.of("/proc/thread-self")).toString();
            return Long.parseLong(link.substring(link.lastIndexOf('/') + 1));
        } catch (IOException | RuntimeException e) {
            return UNKNOWN;
        }
    }

    /** CPU, run-queue wait and state of thread {@code tid} of this process, or {@code null}. */
    private static @Nullable Sample schedstat(long tid) {
        if (tid < 0) {
            return null;
        }
        try {
            String task = "/proc/self/task/" + tid;
            String[] f = new String(Files.readAllBytes(Path.of(task + "/schedstat")), StandardCharsets.US_ASCII)
                    .trim()
                    .split(" ");
            // "<tid> (<name>) <state> ...": the name may hold spaces and parentheses, the state follows the last ')'
            String stat = new String(Files.readAllBytes(Path.of(task + "/stat")), StandardCharsets.US_ASCII);
            int end = stat.lastIndexOf(')');
            boolean runnable = end >= 0 && end + 2 < stat.length() && stat.charAt(end + 2) == 'R';
            return new Sample(Long.parseLong(f[0]), Long.parseLong(f[1]), runnable);
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }
}
