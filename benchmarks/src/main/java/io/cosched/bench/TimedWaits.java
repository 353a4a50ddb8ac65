package io.cosched.bench;

import io.cosched.Coroutines;
import io.cosched.IOManager;
import io.cosched.SchedulerStats;
import io.cosched.net.LoopSocketFactory;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import java.util.stream.Stream;

/**
 * Where a coroutine's timed waits are woken: for each kind of wait that times out, a coroutine on a
 * one-loop IOManager waits 1 ms a few thousand times, and the probe reports per wait the wake-ups
 * its loop saw from its own thread (local) and from others (remote), and the JVM's context switches
 * (summed over /proc/self/task/{@literal *}/status). Run it with the carrier flags:
 *
 * <pre>java --add-opens java.base/java.lang=ALL-UNNAMED -cp benchmarks.jar io.cosched.bench.TimedWaits [waits]</pre>
 */
public final class TimedWaits {

    private interface Wait {
        void once() throws Exception;
    }

    private TimedWaits() {}

    public static void main(String[] args) throws Exception {
        int waits = args.length > 0 ? Integer.parseInt(args[0]) : 2000;
        try (IOManager io = IOManager.builder()
                        .name("waits")
                        .threads(1)
                        .stallThreshold(Duration.ZERO)
                        .build();
                ServerSocket silent = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            io.start();
            Thread.ofPlatform().daemon().start(() -> {
                try {
                    while (true) {
                        silent.accept(); // connections that never answer: every read times out
                    }
                } catch (IOException closed) {
                    // done
                }
            });
            ReentrantLock held = new ReentrantLock();
            CountDownLatch release = new CountDownLatch(1);
            io.spawn(
                    () -> { // another coroutine holds the lock throughout
                        held.lock();
                        try {
                            release.await();
                        } finally {
                            held.unlock();
                        }
                        return null;
                    });
            BlockingQueue<Object> empty = new ArrayBlockingQueue<>(1);
            Map<String, Wait> kinds = new LinkedHashMap<>();
            kinds.put("Thread.sleep(1 ms)", () -> Thread.sleep(1));
            kinds.put("LockSupport.parkNanos(1 ms)", () -> LockSupport.parkNanos(1_000_000));
            kinds.put("ReentrantLock.tryLock(1 ms), held elsewhere", () -> held.tryLock(1, TimeUnit.MILLISECONDS));
            kinds.put("BlockingQueue.poll(1 ms), empty", () -> empty.poll(1, TimeUnit.MILLISECONDS));
            kinds.put("Coroutines.sleep(1 ms)", () -> Coroutines.sleep(Duration.ofMillis(1)));
            System.out.printf(
                    "%-48s %10s %10s %14s%n",
                    "timed wait in a coroutine, timing out", "local/wait", "remote/wait", "switches/wait");
            for (Map.Entry<String, Wait> k : kinds.entrySet()) {
                measure(io, k.getKey(), waits, () -> {
                    for (int i = 0; i < waits; i++) {
                        k.getValue().once();
                    }
                });
            }
            measure(io, "JDK socket read, soTimeout 1 ms", waits, () -> readTimeouts(new Socket(), silent, waits));
            measure(
                    io,
                    "LoopSocket read, soTimeout 1 ms",
                    waits,
                    () -> readTimeouts(new LoopSocketFactory(io).createSocket(), silent, waits));
            release.countDown();
        }
    }

    private static void readTimeouts(Socket s, ServerSocket peer, int waits) throws IOException {
        try (s) {
            s.connect(peer.getLocalSocketAddress(), 5000);
            s.setSoTimeout(1);
            InputStream in = s.getInputStream();
            for (int i = 0; i < waits; i++) {
                try {
                    in.read();
                } catch (SocketTimeoutException expected) {
                    // the point
                }
            }
        }
    }

    private static void measure(IOManager io, String name, int waits, Wait all) throws Exception {
        io.spawn(
                        () -> { // warm the path up first
                            all.once();
                            return null;
                        })
                .join();
        SchedulerStats before = io.stats();
        long switches = contextSwitches();
        io.spawn(() -> {
                    all.once();
                    return null;
                })
                .join();
        long cs = contextSwitches() - switches;
        SchedulerStats after = io.stats();
        System.out.printf(
                "%-48s %10.2f %10.2f %14.2f%n",
                name,
                (after.localWakeups() - before.localWakeups()) / (double) waits,
                (after.remoteWakeups() - before.remoteWakeups()) / (double) waits,
                cs / (double) waits);
    }

    /** Voluntary and involuntary context switches of every thread of this JVM. */
    static long contextSwitches() throws IOException {
        long sum = 0;
        try (Stream<Path> tasks = Files.list(Path.of("/proc/self/task"))) {
            for (Path t : tasks.toList()) {
                try {
                    for (String line : Files.readAllLines(t.resolve("status"))) {
                        if (line.startsWith("voluntary_ctxt_switches")
                                || line.startsWith("nonvoluntary_ctxt_switches")) {
                            sum += Long.parseLong(
                                    line.substring(line.indexOf(':') + 1).trim());
                        }
                    }
                } catch (IOException gone) {
                    // the thread ended meanwhile
                }
            }
        }
        return sum;
    }
}
