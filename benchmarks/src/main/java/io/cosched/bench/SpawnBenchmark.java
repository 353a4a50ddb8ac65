package io.cosched.bench;

import io.cosched.IOManager;
import io.cosched.PoolScheduler;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Spawn-to-completion: how many tiny tasks per second go from "submitted" to "finished". Every
 * runner gets the same task and as many carriers as there are cores.
 *
 * <ul>
 *   <li>{@code iomanager}: coroutines on an IOManager's epoll loops, spawned from a plain thread;</li>
 *   <li>{@code iomanager-inside}: spawned by a coroutine on loop 0 (the server's case: a handler
 *       starting work on its own loop);</li>
 *   <li>{@code pool}: coroutines on a PoolScheduler;</li>
 *   <li>{@code vthread}: JDK virtual threads on the default scheduler;</li>
 *   <li>{@code platform-pool}: a fixed thread pool of platform threads running the task directly (no thread per task).</li>
 * </ul>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 4, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(
        value = 3,
        jvmArgsAppend = {
            "--add-opens",
            "java.base/java.lang=ALL-UNNAMED",
            "--enable-native-access=ALL-UNNAMED",
            "-Xms1g",
            "-Xmx1g"
        })
public class SpawnBenchmark {

    static final int BATCH = 1_000;

    @Param({"iomanager", "iomanager-inside", "pool", "vthread", "platform-pool"})
    public String runner;

    private Executor executor;
    private IOManager io;
    private PoolScheduler pool;
    private ExecutorService platform;

    @Setup
    public void setUp() {
        int cores = Runtime.getRuntime().availableProcessors();
        switch (runner) {
            case "iomanager", "iomanager-inside" -> {
                io = IOManager.builder().name("bench-io").threads(cores).build();
                io.start();
                executor = io;
            }
            case "pool" -> {
                pool = PoolScheduler.builder().name("bench-pool").threads(cores).build();
                pool.start();
                executor = pool;
            }
            case "vthread" -> executor = Thread::startVirtualThread;
            case "platform-pool" -> {
                platform = Executors.newFixedThreadPool(cores);
                executor = platform;
            }
            default -> throw new IllegalArgumentException("runner: " + runner);
        }
    }

    @TearDown
    public void tearDown() {
        if (io != null) {
            io.stop(Duration.ofSeconds(10));
        }
        if (pool != null) {
            pool.stop(Duration.ofSeconds(10));
        }
        if (platform != null) {
            platform.shutdownNow();
        }
    }

    @Benchmark
    @OperationsPerInvocation(BATCH)
    public void spawnToCompletion() throws Exception {
        CountDownLatch done = new CountDownLatch(BATCH);
        Runnable task = done::countDown;
        if ("iomanager-inside".equals(runner)) {
            io.spawnOn(0, () -> {
                        for (int i = 0; i < BATCH; i++) {
                            io.execute(task);
                        }
                        done.await();
                        return null;
                    })
                    .join();
            return;
        }
        for (int i = 0; i < BATCH; i++) {
            executor.execute(task);
        }
        done.await();
    }
}
