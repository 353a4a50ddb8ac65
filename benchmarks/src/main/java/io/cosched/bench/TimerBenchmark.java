package io.cosched.bench;

import io.cosched.IOManager;
import io.cosched.Timer;
import io.cosched.TimerManager;
import io.netty.channel.EventLoop;
import io.netty.util.HashedWheelTimer;
import io.netty.util.Timeout;
import java.time.Duration;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
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
 * Timer add + cancel with a large number of timers already pending (request timeouts that are
 * almost always cancelled). One operation is one add followed by one cancel.
 *
 * <ul>
 *   <li>{@code coschedOnLoop}: TimerManager called on the loop itself (a coroutine or handler on it);</li>
 *   <li>{@code coschedOffLoop}: TimerManager called from a plain thread (goes through the loop's inbox);</li>
 *   <li>{@code nettyScheduleOnLoop}: Netty's own {@code EventLoop.schedule} + cancel on the loop;</li>
 *   <li>{@code jdkScheduledExecutor}: a one-thread ScheduledThreadPoolExecutor with remove-on-cancel;</li>
 *   <li>{@code nettyHashedWheelTimer}: Netty's HashedWheelTimer.</li>
 * </ul>
 */
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
            "-Xms3g",
            "-Xmx3g"
        })
public class TimerBenchmark {

    static final int BATCH = 100_000;
    static final Runnable NOOP = () -> {};

    /** Delays cycle over a minute, so new timers do not all go to the same place. */
    static long delayNanos(int i) {
        return TimeUnit.SECONDS.toNanos(30 + (i * 7919L) % 60);
    }

    /** The same delays as Durations, made once: an application passes its configured timeout, not a new object. */
    static final Duration[] DELAYS = new Duration[60];

    static {
        for (int i = 0; i < DELAYS.length; i++) {
            DELAYS[i] = Duration.ofNanos(delayNanos(i));
        }
    }

    @State(Scope.Benchmark)
    public static class Cosched {
        @Param({"1000000"})
        public int pending;

        IOManager io;
        TimerManager timers;
        EventLoop loop;

        @Setup(Level.Trial)
        public void setUp() throws Exception {
            io = IOManager.builder().name("bench-io").threads(1).build();
            io.start();
            timers = io.timers();
            loop = io.eventLoopGroup().next();
            loop.submit(() -> {
                        for (int i = 0; i < pending; i++) {
                            timers.addTimer(Duration.ofNanos(TimeUnit.HOURS.toNanos(1) + i), NOOP);
                        }
                    })
                    .get();
            if (timers.pending() != pending) {
                throw new IllegalStateException("pending " + timers.pending());
            }
        }

        @TearDown(Level.Trial)
        public void tearDown() {
            io.stop(Duration.ofSeconds(10));
        }
    }

    @State(Scope.Benchmark)
    public static class Netty {
        @Param({"1000000"})
        public int pending;

        IOManager io;
        EventLoop loop;

        @Setup(Level.Trial)
        public void setUp() throws Exception {
            io = IOManager.builder().name("bench-netty").threads(1).build();
            io.start();
            loop = io.eventLoopGroup().next();
            loop.submit(() -> {
                        for (int i = 0; i < pending; i++) {
                            loop.schedule(NOOP, TimeUnit.HOURS.toNanos(1) + i, TimeUnit.NANOSECONDS);
                        }
                    })
                    .get();
        }

        @TearDown(Level.Trial)
        public void tearDown() {
            io.stop(Duration.ofSeconds(10));
        }
    }

    @State(Scope.Benchmark)
    public static class Jdk {
        @Param({"1000000"})
        public int pending;

        ScheduledThreadPoolExecutor stpe;

        @Setup(Level.Trial)
        public void setUp() {
            stpe = new ScheduledThreadPoolExecutor(1);
            stpe.setRemoveOnCancelPolicy(true);
            for (int i = 0; i < pending; i++) {
                stpe.schedule(NOOP, TimeUnit.HOURS.toNanos(1) + i, TimeUnit.NANOSECONDS);
            }
        }

        @TearDown(Level.Trial)
        public void tearDown() {
            stpe.shutdownNow();
        }
    }

    @State(Scope.Benchmark)
    public static class Wheel {
        @Param({"1000000"})
        public int pending;

        HashedWheelTimer wheel;

        @Setup(Level.Trial)
        public void setUp() {
            wheel = new HashedWheelTimer(1, TimeUnit.MILLISECONDS, 512);
            for (int i = 0; i < pending; i++) {
                wheel.newTimeout(t -> {}, TimeUnit.HOURS.toNanos(1) + i, TimeUnit.NANOSECONDS);
            }
        }

        @TearDown(Level.Trial)
        public void tearDown() {
            wheel.stop();
        }
    }

    @Benchmark
    @OperationsPerInvocation(BATCH)
    public void coschedOnLoop(Cosched s) throws Exception {
        s.loop.submit(() -> {
                    for (int i = 0; i < BATCH; i++) {
                        Timer t = s.timers.addTimer(DELAYS[i % 60], NOOP);
                        t.cancel();
                    }
                })
                .get();
    }

    @Benchmark
    @OperationsPerInvocation(BATCH)
    public void coschedOffLoop(Cosched s) {
        for (int i = 0; i < BATCH; i++) {
            Timer t = s.timers.addTimer(DELAYS[i % 60], NOOP);
            t.cancel();
        }
    }

    @Benchmark
    @OperationsPerInvocation(BATCH)
    public void nettyScheduleOnLoop(Netty s) throws Exception {
        s.loop.submit(() -> {
                    for (int i = 0; i < BATCH; i++) {
                        s.loop.schedule(NOOP, delayNanos(i % 60), TimeUnit.NANOSECONDS)
                                .cancel(false);
                    }
                })
                .get();
    }

    @Benchmark
    @OperationsPerInvocation(BATCH)
    public void jdkScheduledExecutor(Jdk s) {
        for (int i = 0; i < BATCH; i++) {
            ScheduledFuture<?> f = s.stpe.schedule(NOOP, delayNanos(i % 60), TimeUnit.NANOSECONDS);
            f.cancel(false);
        }
    }

    @Benchmark
    @OperationsPerInvocation(BATCH)
    public void nettyHashedWheelTimer(Wheel s) {
        for (int i = 0; i < BATCH; i++) {
            Timeout t = s.wheel.newTimeout(x -> {}, delayNanos(i % 60), TimeUnit.NANOSECONDS);
            t.cancel();
        }
    }
}
