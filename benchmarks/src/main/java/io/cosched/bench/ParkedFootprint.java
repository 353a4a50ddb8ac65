package io.cosched.bench;

import io.cosched.Coroutine;
import io.cosched.Coroutines;
import io.cosched.IOManager;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;

/**
 * Heap per parked coroutine: parks N coroutines (or plain virtual threads), measures the heap after
 * full GCs before and after, prints bytes per parked task. Run each runner in its own JVM:
 * {@code java -cp benchmarks.jar io.cosched.bench.ParkedFootprint cosched 1000000}.
 */
public final class ParkedFootprint {

    public static void main(String[] args) throws Exception {
        String runner = args.length > 0 ? args[0] : "cosched";
        int n = args.length > 1 ? Integer.parseInt(args[1]) : 1_000_000;
        long before;
        long after;
        if (runner.equals("cosched")) {
            try (IOManager io = IOManager.builder().name("footprint").threads(2).build()) {
                io.start();
                io.spawn(() -> 0).join(); // warm the class paths before the baseline
                before = usedHeapAfterGc();
                List<Coroutine<Void>> parked = new ArrayList<>(n);
                for (int i = 0; i < n; i++) {
                    parked.add(io.spawn(() -> {
                        Coroutines.suspend();
                        return null;
                    }));
                }
                long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(5);
                while (io.stats().waiting() < n) {
                    if (System.nanoTime() > deadline) {
                        throw new IllegalStateException("not all parked: " + io.stats());
                    }
                    LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(10));
                }
                after = usedHeapAfterGc() - listBytes(n);
                System.out.println("mode=" + io.stats().mode());
                parked.forEach(Coroutine::resume);
                for (Coroutine<Void> c : parked) {
                    c.join();
                }
            }
        } else if (runner.equals("vthread")) {
            AtomicBoolean release = new AtomicBoolean();
            Thread.ofVirtual().start(() -> {}).join();
            before = usedHeapAfterGc();
            List<Thread> parked = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                parked.add(Thread.ofVirtual().start(() -> {
                    while (!release.get()) {
                        LockSupport.park();
                    }
                }));
            }
            for (Thread t : parked) {
                while (t.getState() != Thread.State.WAITING) {
                    Thread.onSpinWait();
                }
            }
            after = usedHeapAfterGc() - listBytes(n);
            release.set(true);
            parked.forEach(LockSupport::unpark);
            for (Thread t : parked) {
                t.join();
            }
        } else {
            throw new IllegalArgumentException("runner: " + runner + " (expected: cosched or vthread)");
        }
        System.out.printf("runner=%s parked=%d bytesPerParked=%d%n", runner, n, (after - before) / n);
    }

    /** The ArrayList of handles the harness itself keeps: a reference per element. */
    private static long listBytes(int n) {
        return 16L + 4L * n; // compressed oops
    }

    private static long usedHeapAfterGc() throws InterruptedException {
        MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
        long used = Long.MAX_VALUE;
        for (int i = 0; i < 5; i++) {
            System.gc();
            Thread.sleep(Duration.ofMillis(100)); // let the collector and reference processing settle
            used = Math.min(used, memory.getHeapMemoryUsage().getUsed());
        }
        return used;
    }
}
