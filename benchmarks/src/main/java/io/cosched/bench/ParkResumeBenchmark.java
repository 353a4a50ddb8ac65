package io.cosched.bench;

import io.cosched.Coroutine;
import io.cosched.Coroutines;
import io.cosched.IOManager;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Park to resume: two parties hand a baton back and forth; one operation is one party parking and
 * being resumed by the other. Every runner uses the same permit protocol as
 * {@link Coroutines#suspend()} / {@link Coroutine#resume()}.
 *
 * <ul>
 *   <li>{@code cosched}: two coroutines on one IOManager loop (Coroutines.suspend / Coroutine.resume);</li>
 *   <li>{@code vthreadOneCarrier}: two JDK virtual threads with the default scheduler cut to one carrier;</li>
 *   <li>{@code vthread}: the same on the default scheduler (one carrier per core);</li>
 *   <li>{@code platformThreads}: two platform threads.</li>
 * </ul>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
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
public class ParkResumeBenchmark {

    static final int ROUNDS = 10_000;

    private IOManager io;

    @Setup
    public void setUp() {
        io = IOManager.builder().name("bench-io").threads(1).build();
        io.start();
    }

    @TearDown
    public void tearDown() {
        io.stop(Duration.ofSeconds(10));
    }

    @Benchmark
    @OperationsPerInvocation(ROUNDS)
    public void cosched() throws Exception {
        Coroutine<?>[] peers = new Coroutine<?>[2];
        CountDownLatch bothExist = new CountDownLatch(1);
        for (int side = 0; side < 2; side++) {
            int me = side;
            peers[side] = io.spawn(() -> {
                bothExist.await();
                for (int r = 0; r < ROUNDS; r++) {
                    if ((r & 1) == me) {
                        peers[1 - me].resume();
                    } else {
                        Coroutines.suspend();
                    }
                }
                return null;
            });
        }
        bothExist.countDown();
        peers[0].join();
        peers[1].join();
    }

    @Benchmark
    @OperationsPerInvocation(ROUNDS)
    @Fork(
            value = 3,
            jvmArgsAppend = {
                "-Djdk.virtualThreadScheduler.parallelism=1",
                "--add-opens",
                "java.base/java.lang=ALL-UNNAMED",
                "--enable-native-access=ALL-UNNAMED",
                "-Xms1g",
                "-Xmx1g"
            })
    public void vthreadOneCarrier() throws Exception {
        threads(true);
    }

    @Benchmark
    @OperationsPerInvocation(ROUNDS)
    public void vthread() throws Exception {
        threads(true);
    }

    @Benchmark
    @OperationsPerInvocation(ROUNDS)
    public void platformThreads() throws Exception {
        threads(false);
    }

    /** The same protocol as Coroutines.suspend/resume, for plain threads. */
    static final class Baton {
        final AtomicInteger permit = new AtomicInteger();
        volatile Thread owner;

        void resume() {
            if (permit.getAndSet(1) == 0) {
                LockSupport.unpark(owner);
            }
        }

        void suspend() {
            while (permit.getAndSet(0) != 1) {
                LockSupport.park(this);
            }
        }
    }

    private void threads(boolean virtual) throws Exception {
        Baton[] batons = {new Baton(), new Baton()};
        CountDownLatch bothExist = new CountDownLatch(1);
        Thread[] threads = new Thread[2];
        for (int side = 0; side < 2; side++) {
            int me = side;
            Runnable body = () -> {
                try {
                    bothExist.await();
                } catch (InterruptedException e) {
                    return;
                }
                for (int r = 0; r < ROUNDS; r++) {
                    if ((r & 1) == me) {
                        batons[1 - me].resume();
                    } else {
                        batons[me].suspend();
                    }
                }
            };
            threads[side] = virtual
                    ? Thread.ofVirtual().unstarted(body)
                    : Thread.ofPlatform().unstarted(body);
            batons[side].owner = threads[side];
        }
        threads[0].start();
        threads[1].start();
        bothExist.countDown();
        threads[0].join();
        threads[1].join();
    }
}
