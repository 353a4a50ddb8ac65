package io.cosched.internal;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Where a carrier thread's time went, for telling a carrier stuck in a task from one the OS did not
 * run: CPU time, and on Linux the time it waited in a run queue for a CPU
 * ({@code /proc/self/task/<tid>/schedstat}). Tests substitute their own.
 */
interface ThreadTimes {

    long UNKNOWN = -1;

    /** CPU time the carrier's thread has used, or {@link #UNKNOWN}. */
    long cpuNanos(CarrierBase carrier);

    /** Time the carrier's thread has spent runnable but waiting for a CPU, or {@link #UNKNOWN}. */
    long runQueueNanos(CarrierBase carrier);

    ThreadTimes SYSTEM = new ThreadTimes() {
        // Looked up on first use: the management classes are only needed once a carrier looks stuck.
        private volatile ThreadMXBean threads;

        @Override
        public long cpuNanos(CarrierBase carrier) {
            long[] s = schedstat(carrier.osThreadId());
            if (s != null) {
                return s[0];
            }
            Thread t = carrier.thread();
            if (t == null || t.isVirtual()) {
                return UNKNOWN;
            }
            ThreadMXBean mx = threads;
            if (mx == null) {
                threads = mx = ManagementFactory.getThreadMXBean();
            }
            return mx.isThreadCpuTimeSupported() ? Math.max(UNKNOWN, mx.getThreadCpuTime(t.threadId())) : UNKNOWN;
        }

        @Override
        public long runQueueNanos(CarrierBase carrier) {
            long[] s = schedstat(carrier.osThreadId());
            return s != null ? s[1] : UNKNOWN;
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

    /** {@code [cpu ns, run-queue wait ns]} of thread {@code tid} of this process, or {@code null}. */
    private static long[] schedstat(long tid) {
        if (tid < 0) {
            return null;
        }
        try {
            String[] f = new String(Files.readAllBytes(Path.of("/proc/self/task/" + tid + "/schedstat")),
                    StandardCharsets.US_ASCII).trim().split(" ");
            return new long[] {Long.parseLong(f[0]), Long.parseLong(f[1])};
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }
}
