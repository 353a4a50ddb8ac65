package io.cosched.internal;

import static io.cosched.TestSupport.eventually;
import static org.assertj.core.api.Assertions.assertThat;

import io.cosched.CarrierStats;
import io.cosched.CoroutineState;
import io.cosched.SchedulerStats;
import io.cosched.TestSupport;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.util.ReferenceCountUtil;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.ReentrantLock;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The stall watchdog: what it reports, when, and that a stalled carrier's work moves elsewhere. */
@Timeout(60)
class StallWatchdogTest {

    private static final long MS = 1_000_000L;
    private static final long NO_WATCHDOG = 0;

    private final List<LogRecord> logged = new CopyOnWriteArrayList<>();
    private final Handler capture = new Handler() {
        @Override
        public void publish(LogRecord r) {
            r.getSourceClassName(); // inferred lazily from the calling thread's stack: do it on the logging thread
            logged.add(r);
        }

        @Override
        public void flush() {}

        @Override
        public void close() {}
    };
    private final AtomicBoolean release = new AtomicBoolean();
    private final CountDownLatch unblock = new CountDownLatch(1);
    private CoroutineRuntime scheduler;

    @BeforeEach
    void captureLog() {
        Logger.getLogger("io.cosched").addHandler(capture);
    }

    @AfterEach
    void tearDown() {
        release.set(true);
        unblock.countDown();
        Logger.getLogger("io.cosched").removeHandler(capture);
        if (scheduler != null) {
            scheduler.stop(Duration.ofSeconds(10));
        }
    }

    /** A CPU hog: spins until released (or 30 s pass, so a failed test cannot spin forever). */
    private void spinUntilReleased(CountDownLatch started) {
        started.countDown();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!release.get() && System.nanoTime() - deadline < 0) {
            Thread.onSpinWait();
        }
    }

    private List<String> messages(Level level) {
        java.util.logging.Formatter f = new java.util.logging.SimpleFormatter();
        return logged.stream()
                .filter(r ->
                        r.getLevel() == level && StallWatchdog.class.getName().equals(r.getSourceClassName()))
                .map(f::formatMessage)
                .toList();
    }

    /**
     * A watchdog over {@code pool} with a 100 ms threshold and a 500 ms warm-up limit, time and the JIT's compiling time
     * as given, and the JVM's loaded classes as in {@code classes}.
     */
    private static StallWatchdog warmUpWatchdog(PoolRuntime pool, long[] now, long[] jitMillis, long[] classes) {
        return pool.manualWatchdog(
                100 * MS,
                500 * MS,
                () -> now[0],
                ThreadTimes.burning(() -> now[0]),
                WarmUpSignals.of(() -> jitMillis[0], () -> classes[0]),
                Long.MAX_VALUE);
    }

    /** As above with no class loaded while it watches. */
    private static StallWatchdog warmUpWatchdog(PoolRuntime pool, long[] now, long[] jitMillis) {
        return warmUpWatchdog(pool, now, jitMillis, new long[] {5000});
    }

    @Test
    @Tag("carrier-only") // in fallback mode a spinning coroutine holds a JDK carrier, not ours
    void aStallWhileTheJitCompilesThatEndsWithinTheLimitIsOneInfoLineCountedApartWhenItEnds() throws Exception {
        PoolRuntime pool = hoggedPool("warm-pool");
        long[] now = {0};
        long[] jit = {1000};
        StallWatchdog watchdog = warmUpWatchdog(pool, now, jit);
        watchdog.check(0);
        jit[0] += 30; // the JIT compiled 30 ms in the 100 ms watched: the code may not be compiled yet
        now[0] = 100 * MS;
        watchdog.check(now[0]);
        assertThat(pool.stats().stalledThreads())
                .as("its work moves as for any stall")
                .isEqualTo(1);
        assertThat(pool.stats().stalls()).isZero();
        assertThat(pool.stats().warmUpStalls()).as("judged when it ends").isZero();
        now[0] = 300 * MS;
        watchdog.check(now[0]);
        assertThat(messages(Level.WARNING)).isEmpty();
        assertThat(messages(Level.INFO)).isEmpty();

        endTheHog(pool);
        now[0] = 350 * MS;
        watchdog.check(now[0]);
        assertThat(pool.stats().warmUpStalls()).isEqualTo(1);
        assertThat(pool.stats().stalls()).isZero();
        assertThat(pool.stats().stalledThreads()).isZero();
        assertThat(messages(Level.WARNING)).isEmpty();
        assertThat(messages(Level.INFO))
                .as("one line, no second one for moving again")
                .singleElement()
                .satisfies(m -> assertThat(m)
                        .contains(
                                "carrier warm-pool-0 was stuck for 350 ms (threshold 100 ms)",
                                "while warming up (the JIT compiling: 30 ms of compiling in the 100 ms watched)",
                                "Counted in warmUpStalls, not stalls")
                        .doesNotContain("spinUntilReleased"));
    }

    @Test
    @Tag("carrier-only")
    void aStallWhileTheJitCompilesStillStuckAtTheLimitIsAStallWithItsStack() throws Exception {
        PoolRuntime pool = hoggedPool("limit-pool");
        long[] now = {0};
        long[] jit = {0};
        StallWatchdog watchdog = warmUpWatchdog(pool, now, jit);
        watchdog.check(0);
        jit[0] = 50;
        now[0] = 100 * MS;
        watchdog.check(now[0]);
        now[0] = 499 * MS;
        watchdog.check(now[0]);
        assertThat(pool.stats().stalls()).isZero();
        assertThat(messages(Level.WARNING)).isEmpty();

        now[0] = 500 * MS;
        watchdog.check(now[0]);
        assertThat(pool.stats().stalls()).isEqualTo(1);
        assertThat(pool.stats().warmUpStalls()).isZero();
        assertThat(messages(Level.WARNING))
                .singleElement()
                .satisfies(m -> assertThat(m)
                        .contains(
                                "carrier limit-pool-0 has been stuck for 500 ms (threshold 100 ms)",
                                "past the warm-up limit of 500 ms (at the threshold: the JIT compiling",
                                "spinUntilReleased"));
        now[0] = 900 * MS;
        watchdog.check(now[0]);
        assertThat(messages(Level.WARNING)).as("reported once").hasSize(1);

        endTheHog(pool);
        now[0] = 1000 * MS;
        watchdog.check(now[0]);
        assertThat(pool.stats().warmUpStalls()).isZero();
        assertThat(messages(Level.INFO)).anySatisfy(m -> assertThat(m).contains("limit-pool-0 moves again"));
    }

    @Test
    @Tag("carrier-only")
    void aHogWithNoWarmUpCauseIsAStallWithItsStackAtTheThresholdRightAfterStart() throws Exception {
        PoolRuntime pool = hoggedPool("fresh-pool");
        long[] now = {0};
        long[] jit = {0};
        StallWatchdog watchdog = warmUpWatchdog(pool, now, jit);
        watchdog.check(0);
        jit[0] = 9; // under a tenth of the 100 ms watched
        now[0] = 100 * MS;
        watchdog.check(now[0]);
        assertThat(pool.stats().stalls()).isEqualTo(1);
        assertThat(pool.stats().warmUpStalls()).isZero();
        assertThat(messages(Level.WARNING))
                .singleElement()
                .satisfies(m -> assertThat(m)
                        .contains("has been stuck for 100 ms", "spinUntilReleased")
                        .doesNotContain("warm-up"));
    }

    @Test
    @Tag("carrier-only")
    void aStallWhileTheJitCompilesIsAStallAtTheThresholdWhenTheLimitIsZero() throws Exception {
        PoolRuntime pool = hoggedPool("strict-pool");
        long[] now = {0};
        long[] jit = {0};
        StallWatchdog watchdog = pool.manualWatchdog(
                100 * MS,
                0,
                () -> now[0],
                ThreadTimes.burning(() -> now[0]),
                WarmUpSignals.of(() -> jit[0], () -> 0),
                Long.MAX_VALUE);
        watchdog.check(0);
        jit[0] = 100;
        now[0] = 100 * MS;
        watchdog.check(now[0]);
        assertThat(pool.stats().stalls()).isEqualTo(1);
        assertThat(messages(Level.WARNING))
                .singleElement()
                .satisfies(m -> assertThat(m).contains("spinUntilReleased"));
    }

    @Test
    @Tag("carrier-only")
    void aStallWhileTheJvmLoadsClassesElsewhereIsJudgedAsWarmUpItsCodeMayWaitForTheirInitialisation() throws Exception {
        PoolRuntime pool = hoggedPool("classes-pool");
        long[] now = {0};
        long[] jit = {0};
        long[] classes = {8000};
        StallWatchdog watchdog = warmUpWatchdog(pool, now, jit, classes);
        watchdog.check(0);
        classes[0] += 9; // under ten: not warm-up
        now[0] = 100 * MS;
        watchdog.check(now[0]);
        assertThat(pool.stats().stalls()).as("nine classes are no warm-up").isEqualTo(1);
        endTheHog(pool);
        now[0] = 200 * MS;
        watchdog.check(now[0]);

        release.set(false);
        CountDownLatch again = new CountDownLatch(1);
        pool.spawn((Runnable) () -> spinUntilReleased(again), pool.carrier(0), false);
        assertThat(again.await(10, TimeUnit.SECONDS)).isTrue();
        now[0] = 1000 * MS;
        watchdog.check(now[0]); // it moved: a new task
        now[0] = 1050 * MS;
        watchdog.check(now[0]); // a suspect from here
        classes[0] += 40;
        now[0] = 1100 * MS;
        watchdog.check(now[0]);
        assertThat(pool.stats().stalls()).as("judged when it ends").isEqualTo(1);
        endTheHog(pool);
        now[0] = 1200 * MS;
        watchdog.check(now[0]);
        assertThat(pool.stats().warmUpStalls()).isEqualTo(1);
        assertThat(messages(Level.INFO))
                .anySatisfy(m -> assertThat(m)
                        .contains(
                                "classes-pool-0 was stuck for 200 ms",
                                "while warming up (the JVM loading classes: 40 loaded in the 50 ms watched)"));
    }

    /**
     * A class loader whose loading spins until released: a coroutine stuck in it is stuck loading a class, with the
     * class loader's frames on its real stack.
     */
    private final class SlowLoader extends ClassLoader {
        private final CountDownLatch loading;

        SlowLoader(CountDownLatch loading) {
            super(null);
            this.loading = loading;
        }

        @Override
        protected Class<?> findClass(String name) throws ClassNotFoundException {
            spinUntilReleased(loading);
            throw new ClassNotFoundException(name);
        }
    }

    @Test
    @Tag("carrier-only")
    void aStallLoadingAClassThatEndsWithinTheLimitIsAWarmUpStallWhateverTheJit() throws Exception {
        PoolRuntime pool = new PoolRuntime(RuntimeSettings.of("loading-pool", 2).withStallThresholdNanos(NO_WATCHDOG));
        scheduler = pool;
        pool.start();
        CountDownLatch loading = new CountDownLatch(1);
        pool.spawn(
                (Runnable) () -> {
                    try {
                        new SlowLoader(loading).loadClass("com.example.NotYetLoaded");
                    } catch (ClassNotFoundException expected) {
                        // released
                    }
                },
                pool.carrier(0),
                false);
        assertThat(loading.await(10, TimeUnit.SECONDS)).isTrue();
        long[] now = {0};
        long[] jit = {0}; // the JIT idle: the stack alone tells
        StallWatchdog watchdog = warmUpWatchdog(pool, now, jit);
        watchdog.check(0);
        now[0] = 100 * MS;
        watchdog.check(now[0]);
        assertThat(pool.stats().stalledThreads()).isEqualTo(1);
        assertThat(pool.stats().stalls()).isZero();
        release.set(true);
        eventually(Duration.ofSeconds(5), () -> !isBusy(pool, 0), () -> "carrier 0 still loading");
        now[0] = 200 * MS;
        watchdog.check(now[0]);
        assertThat(pool.stats().warmUpStalls()).isEqualTo(1);
        assertThat(pool.stats().stalls()).isZero();
        assertThat(messages(Level.INFO))
                .singleElement()
                .satisfies(m -> assertThat(m).contains("was stuck for 200 ms", "while warming up (loading classes)"));
        assertThat(messages(Level.WARNING)).isEmpty();
    }

    @Test
    void codeLoadingClassesIsWarmUpWhenever() {
        StackTraceElement app = new StackTraceElement("com.example.Handler", "handle", "Handler.java", 10);
        StackTraceElement load = new StackTraceElement("java.lang.ClassLoader", "loadClass", "ClassLoader.java", 500);
        StackTraceElement init = new StackTraceElement("com.example.Codec", "<clinit>", "Codec.java", 3);
        StackTraceElement builtin =
                new StackTraceElement("jdk.internal.loader.BuiltinClassLoader", "findClassOnClassPathOrNull", null, -1);
        assertThat(StallWatchdog.loadsClasses(new StackTraceElement[] {load, app}))
                .isTrue();
        assertThat(StallWatchdog.loadsClasses(new StackTraceElement[] {app, init, app}))
                .isTrue();
        assertThat(StallWatchdog.loadsClasses(new StackTraceElement[] {builtin, app}))
                .isTrue();
        assertThat(StallWatchdog.loadsClasses(new StackTraceElement[] {app, app}))
                .isFalse();
    }

    @Test
    @Tag("carrier-only") // in fallback mode a spinning coroutine holds a JDK carrier, not ours
    void aCarrierStuckInOneTaskIsReportedOnceAtTheThresholdAndRecoversWhenItMovesOn() throws Exception {
        PoolRuntime pool = new PoolRuntime(RuntimeSettings.of("stall-pool", 2).withStallThresholdNanos(NO_WATCHDOG));
        scheduler = pool;
        pool.start();
        long[] now = {0};
        StallWatchdog watchdog = pool.manualWatchdog(100 * MS, () -> now[0]);

        CountDownLatch started = new CountDownLatch(1);
        CoroutineImpl<Void> hog = pool.spawn((Runnable) () -> spinUntilReleased(started), pool.carrier(0), false);
        assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();

        now[0] = 0;
        watchdog.check(now[0]);
        now[0] = 99 * MS;
        watchdog.check(now[0]);
        assertThat(pool.stats().stalls()).isZero();
        assertThat(pool.carrierStats().get(0).state()).isEqualTo(CarrierStats.State.BUSY);

        now[0] = 100 * MS;
        watchdog.check(now[0]);
        now[0] = 150 * MS;
        watchdog.check(now[0]); // still stuck: not reported twice
        SchedulerStats stuck = pool.stats();
        assertThat(stuck.stalls()).isEqualTo(1);
        assertThat(stuck.stalledThreads()).isEqualTo(1);
        assertThat(pool.carrierStats())
                .extracting(CarrierStats::state)
                .containsExactly(CarrierStats.State.STALLED, CarrierStats.State.IDLE);
        assertThat(messages(Level.WARNING))
                .singleElement()
                .satisfies(m -> assertThat(m)
                        .contains(
                                "PoolScheduler 'stall-pool'",
                                "carrier stall-pool-0",
                                "stuck for 100 ms",
                                "threshold 100 ms",
                                "in coroutine",
                                "spinUntilReleased"));

        // Work bound to the stuck carrier spills to the shared queue and runs on the other one.
        CoroutineImpl<String> bound =
                pool.spawn((java.util.concurrent.Callable<String>) TestSupport::carrierName, pool.carrier(0), false);
        assertThat(bound.toFuture().get(10, TimeUnit.SECONDS)).isEqualTo("stall-pool-1");

        release.set(true);
        hog.toFuture().get(10, TimeUnit.SECONDS);
        eventually(Duration.ofSeconds(5), () -> !isBusy(pool, 0), () -> "carrier 0 still in the hog's step");
        now[0] = 300 * MS;
        watchdog.check(now[0]);
        assertThat(pool.carrierStats().get(0).state()).isEqualTo(CarrierStats.State.IDLE);
        assertThat(pool.stats().stalledThreads()).isZero();
        assertThat(pool.stats().stalls()).isEqualTo(1);
        assertThat(messages(Level.INFO)).anySatisfy(m -> assertThat(m).contains("stall-pool-0 moves again"));
    }

    @Test
    @Tag("carrier-only")
    void aStallAndItsEndAreFlightRecorderEventsWithTheVerdictAndTheStuckCode(@TempDir Path dir) throws Exception {
        PoolRuntime pool = hoggedPool("jfr-pool");
        long[] now = {0};
        SetTimes times = new SetTimes();
        StallWatchdog watchdog = pool.manualWatchdog(100 * MS, () -> now[0], times, Long.MAX_VALUE);
        Path file = dir.resolve("stall.jfr");
        try (Recording recording = new Recording()) {
            recording.enable("io.cosched.Stall");
            recording.enable("io.cosched.StallEnded");
            recording.start();
            watchdog.check(0);
            times.cpu[0] = 130 * MS; // it ran all the time watched
            watchdog.check(130 * MS);
            endTheHog(pool);
            watchdog.check(300 * MS);
            recording.stop();
            recording.dump(file);
        }
        List<RecordedEvent> events = RecordingFile.readAllEvents(file);
        assertThat(events)
                .extracting(e -> e.getEventType().getName())
                .containsExactly("io.cosched.Stall", "io.cosched.StallEnded");
        RecordedEvent stall = events.get(0);
        assertThat(stall.getString("scheduler")).isEqualTo("jfr-pool");
        assertThat(stall.getString("carrier")).isEqualTo("jfr-pool-0");
        assertThat(stall.getDuration("stuckFor")).isEqualTo(Duration.ofMillis(130));
        assertThat(stall.getString("verdict")).isEqualTo("running");
        assertThat(stall.getString("task")).startsWith("coroutine ");
        assertThat(stall.getString("topFrames")).contains("spinUntilReleased");
        RecordedEvent ended = events.get(1);
        assertThat(ended.getString("carrier")).isEqualTo("jfr-pool-0");
        assertThat(ended.getDuration("stuckFor")).isEqualTo(Duration.ofMillis(300));
    }

    /** Thread times a test sets: CPU used, run-queue wait and whether runnable now, per carrier index. */
    private static final class SetTimes implements ThreadTimes {
        final long[] cpu = new long[2];
        final long[] queued = new long[2];
        final boolean[] runnable = new boolean[2];

        @Override
        public Sample sample(Carrier carrier) {
            return new Sample(cpu[carrier.index()], queued[carrier.index()], runnable[carrier.index()]);
        }
    }

    /** A pool of two whose carrier 0 runs a hog, watched by a manual watchdog on {@code now}. */
    private PoolRuntime hoggedPool(String name) throws InterruptedException {
        PoolRuntime pool = new PoolRuntime(RuntimeSettings.of(name, 2).withStallThresholdNanos(NO_WATCHDOG));
        scheduler = pool;
        pool.start();
        CountDownLatch started = new CountDownLatch(1);
        pool.spawn((Runnable) () -> spinUntilReleased(started), pool.carrier(0), false);
        assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
        return pool;
    }

    @Test
    @Tag("carrier-only")
    void aCarrierThatWaitedForACpuIsCountedAsStarvedNotReportedAndStillWatched() throws Exception {
        PoolRuntime pool = hoggedPool("starved-pool");
        long[] now = {0};
        SetTimes times = new SetTimes();
        StallWatchdog watchdog = pool.manualWatchdog(100 * MS, () -> now[0], times, Long.MAX_VALUE);

        watchdog.check(0);
        watchdog.check(10 * MS); // a suspect from here: the baseline of its thread times
        now[0] = 120 * MS;
        times.cpu[0] = 2 * MS; // ran 2 ms of 110
        times.queued[0] = 100 * MS; // and waited 100 ms for a CPU
        watchdog.check(now[0]);
        watchdog.check(now[0] += 20 * MS); // the same wait is counted once
        assertThat(pool.stats().stalls()).isZero();
        assertThat(pool.stats().starvations()).isEqualTo(1);
        assertThat(pool.stats().stalledThreads()).isZero();
        assertThat(pool.carrierStats().get(0).state()).isEqualTo(CarrierStats.State.BUSY); // nothing spills
        assertThat(messages(Level.WARNING)).isEmpty();
        assertThat(messages(Level.INFO))
                .singleElement()
                .satisfies(m -> assertThat(m)
                        .contains("carrier starved-pool-0", "waiting for a CPU", "Not a stall", "cosched.starvations"));

        // Once it has run half a threshold on the CPU it gets, it is stuck after all.
        times.cpu[0] = 52 * MS;
        watchdog.check(now[0] += 20 * MS);
        assertThat(pool.stats().stalls()).isEqualTo(1);
        assertThat(messages(Level.WARNING))
                .singleElement()
                .satisfies(m -> assertThat(m)
                        .contains(
                                "carrier starved-pool-0", "has been stuck for 160 ms", "running", "spinUntilReleased"));
    }

    @Test
    @Tag("carrier-only")
    void aCarrierRunnableButOffCpuIsStarvedThoughItsWaitIsNotCountedYet() throws Exception {
        PoolRuntime pool = hoggedPool("woken-pool");
        long[] now = {0};
        SetTimes times = new SetTimes();
        StallWatchdog watchdog = pool.manualWatchdog(100 * MS, () -> now[0], times, Long.MAX_VALUE);
        watchdog.check(0);
        watchdog.check(10 * MS);
        // neither CPU nor run queue moved, as for a thread asleep in a blocking call; but it is runnable: woken, and
        // waiting for a CPU that Linux counts in schedstat only once it gets one
        times.runnable[0] = true;
        watchdog.check(now[0] = 120 * MS);
        assertThat(pool.stats().stalls()).isZero();
        assertThat(pool.stats().starvations()).isEqualTo(1);
        assertThat(messages(Level.WARNING)).isEmpty();
    }

    @Test
    @Tag("carrier-only")
    void aCarrierOffCpuWithoutWaitingForOneIsBlockedAndThatIsAStall() throws Exception {
        PoolRuntime pool = hoggedPool("blocked-pool");
        long[] now = {0};
        SetTimes times = new SetTimes(); // neither CPU nor run queue moves: asleep in a blocking call
        StallWatchdog watchdog = pool.manualWatchdog(100 * MS, () -> now[0], times, Long.MAX_VALUE);
        watchdog.check(0);
        watchdog.check(10 * MS);
        watchdog.check(now[0] = 100 * MS);
        assertThat(pool.stats().stalls()).isEqualTo(1);
        assertThat(pool.stats().starvations()).isZero();
        assertThat(messages(Level.WARNING))
                .singleElement()
                .satisfies(m -> assertThat(m)
                        .contains("carrier blocked-pool-0", "blocked (waiting on a lock or in a blocking call)"));
    }

    @Test
    @Tag("carrier-only")
    void timeTheWatchdogDidNotLookCountsForNobody() throws Exception {
        PoolRuntime pool = hoggedPool("hiccup-pool");
        long[] now = {0};
        StallWatchdog watchdog =
                pool.manualWatchdog(100 * MS, () -> now[0], ThreadTimes.burning(() -> now[0]), 30 * MS);
        watchdog.check(0);
        watchdog.check(now[0] = 10 * MS);
        watchdog.check(now[0] = 150 * MS); // a 140 ms gap, as in a GC pause: the hog's window starts again
        assertThat(pool.stats().stalls()).isZero();
        for (now[0] = 170 * MS; now[0] < 250 * MS; now[0] += 20 * MS) {
            watchdog.check(now[0]);
        }
        assertThat(pool.stats().stalls()).isZero();
        watchdog.check(now[0] = 250 * MS); // watched without a gap for 100 ms
        assertThat(pool.stats().stalls()).isEqualTo(1);
        assertThat(messages(Level.WARNING))
                .singleElement()
                .satisfies(m -> assertThat(m).contains("stuck for 100 ms"));
    }

    /** Releases the hog on carrier 0 and waits until the carrier has left its step. */
    private void endTheHog(CoroutineRuntime pool) {
        release.set(true);
        eventually(Duration.ofSeconds(5), () -> !isBusy(pool, 0), () -> "carrier 0 still in the hog's step");
    }

    private static boolean isBusy(CoroutineRuntime s, int carrier) {
        return s.carrierArray()[carrier].isBusy();
    }

    @Test
    void aLoopBlockedOutsideCoschedTasksIsFoundByItsUnansweredPing() throws Exception {
        IORuntime io = new IORuntime(RuntimeSettings.of("stall-io", 1).withStallThresholdNanos(NO_WATCHDOG));
        scheduler = io;
        io.start();
        long[] now = {0};
        StallWatchdog watchdog = io.manualWatchdog(100 * MS, () -> now[0]);

        CountDownLatch entered = new CountDownLatch(1);
        io.carrier(0).loop().execute(() -> {
            entered.countDown();
            await(unblock); // a blocking call in plain Netty code on the loop
        });
        assertThat(entered.await(10, TimeUnit.SECONDS)).isTrue();
        Thread loop0 = io.carrier(0).thread();
        eventually(
                Duration.ofSeconds(5),
                () -> loop0.getState() == Thread.State.TIMED_WAITING,
                () -> "loop 0: " + loop0.getState());

        watchdog.check(now[0]); // the loop took the blocking task since the watchdog was made: that counts as a move
        now[0] = 10 * MS;
        watchdog.check(now[0]); // no move since, and not in a task of ours: a ping
        now[0] = 110 * MS;
        watchdog.check(now[0]); // unanswered for a threshold

        assertThat(io.carrierStats()).extracting(CarrierStats::state).containsExactly(CarrierStats.State.STALLED);
        assertThat(messages(Level.WARNING))
                .singleElement()
                .satisfies(m -> assertThat(m)
                        .contains("IOManager 'stall-io'", "carrier stall-io-0", "outside cosched's tasks", "await"));

        unblock.countDown();
        eventually(
                Duration.ofSeconds(5),
                () -> {
                    watchdog.check(now[0] += MS);
                    return !io.carrier(0).isStalled();
                },
                () -> "loop 0 never answered its ping");
        assertThat(io.stats().stalls()).isEqualTo(1);
    }

    /**
     * A loop working through a backlog of short Netty tasks (response writes queued by coroutines,
     * say) longer than the threshold moves: every task it takes counts, so the watchdog's ping, queued
     * behind the backlog, is not needed to see it move.
     */
    @Test
    void aLoopWorkingThroughALongBacklogOfShortNettyTasksIsNotStuck() throws Exception {
        IORuntime io = new IORuntime(RuntimeSettings.of("backlog-io", 1).withStallThresholdNanos(NO_WATCHDOG));
        scheduler = io;
        io.start();
        long[] now = {0};
        StallWatchdog watchdog = io.manualWatchdog(100 * MS, () -> now[0]);
        CountDownLatch gate = new CountDownLatch(1);
        io.carrier(0).loop().execute(() -> await(gate)); // holds the loop while the backlog queues up
        for (int i = 0; i < 200; i++) {
            io.carrier(0).loop().execute(() -> {
                long until = System.nanoTime() + MS; // 1 ms of work each
                while (System.nanoTime() - until < 0) {
                    Thread.onSpinWait();
                }
            });
        }
        watchdog.check(now[0]); // pings: the ping waits behind 200 ms of tasks
        gate.countDown();
        for (int look = 0; look < 6; look++) {
            long before = io.carrier(0).progress();
            eventually(Duration.ofSeconds(5), () -> io.carrier(0).progress() != before, () -> "loop 0 did not move");
            watchdog.check(now[0] += 60 * MS);
        }
        assertThat(io.stats().stalls()).isZero();
        assertThat(messages(Level.WARNING)).isEmpty();
    }

    @Test
    void anIdleLoopInItsPollIsNeitherPingedNorReported() throws Exception {
        IORuntime io = new IORuntime(RuntimeSettings.of("idle-io", 1).withStallThresholdNanos(NO_WATCHDOG));
        scheduler = io;
        io.start();
        long[] now = {0};
        StallWatchdog watchdog = io.manualWatchdog(100 * MS, () -> now[0]);
        LoopCarrier loop = io.carrier(0);
        eventually(Duration.ofSeconds(5), loop::waitsForWork, () -> "loop 0 never waited in its poll");
        for (int round = 0; round < 20; round++) {
            watchdog.check(now[0]);
            now[0] += 60 * MS;
        }
        assertThat(loop.pingsPosted())
                .as("pings posted to a loop idle in epoll_wait")
                .isZero();
        assertThat(io.stats().stalls()).isZero();
        assertThat(messages(Level.WARNING)).isEmpty();
    }

    /**
     * Channel handlers run inside the loop's I/O turn, after its poll returned: a loop stuck in one is not idle. This
     * holds Netty to what {@link PollWatch} relies on, that its I/O handler asks its context whether to report the
     * active I/O time once the poll has returned and before it handles the ready I/O.
     */
    @Test
    void aLoopStuckInAChannelHandlerOnReadyIoIsFoundByItsUnansweredPing() throws Exception {
        IORuntime io = new IORuntime(RuntimeSettings.of("handler-io", 1).withStallThresholdNanos(NO_WATCHDOG));
        scheduler = io;
        io.start();
        long[] now = {0};
        StallWatchdog watchdog = io.manualWatchdog(100 * MS, () -> now[0]);
        CountDownLatch entered = new CountDownLatch(1);
        try (ServerSocket peer = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            Channel ch = io.bootstrap(0)
                    .handler(new ChannelInboundHandlerAdapter() {
                        @Override
                        public void channelRead(ChannelHandlerContext ctx, Object msg) {
                            ReferenceCountUtil.release(msg);
                            entered.countDown();
                            await(unblock); // a blocking call in a channel handler, on ready I/O
                        }
                    })
                    .connect(peer.getLocalSocketAddress())
                    .sync()
                    .channel();
            try (Socket other = peer.accept()) {
                other.getOutputStream().write(1);
                other.getOutputStream().flush();
                assertThat(entered.await(10, TimeUnit.SECONDS)).isTrue();
                LoopCarrier loop = io.carrier(0);
                assertThat(loop.waitsForWork()).as("in a handler on ready I/O").isFalse();

                watchdog.check(now[0]); // the connect and the read moved the loop since the watchdog was made
                now[0] = 10 * MS;
                watchdog.check(now[0]); // no move since, not in its poll nor in a task of ours: a ping
                now[0] = 110 * MS;
                watchdog.check(now[0]); // unanswered for a threshold

                assertThat(io.carrierStats())
                        .extracting(CarrierStats::state)
                        .containsExactly(CarrierStats.State.STALLED);
                assertThat(messages(Level.WARNING))
                        .singleElement()
                        .satisfies(m -> assertThat(m).contains("carrier handler-io-0", "channelRead"));
                unblock.countDown();
                eventually(
                        Duration.ofSeconds(5),
                        () -> {
                            watchdog.check(now[0] += MS);
                            return !loop.isStalled();
                        },
                        () -> "loop 0 never moved again");
            } finally {
                ch.close().sync();
            }
        }
    }

    /**
     * With every carrier idle (loops in their poll, a pool's threads parked for want of work) the watchdog thread
     * rests, parked without a deadline; the first carrier to get work wakes it, and one that then gets stuck is
     * reported as ever.
     */
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"rest-io", "rest-pool"})
    @Tag("carrier-only") // in fallback mode a spinning coroutine holds a JDK carrier, not ours
    void theWatchdogRestsWhileEveryCarrierIsIdleAndACarrierThatGetsStuckWakesIt(String name) throws Exception {
        RuntimeSettings settings = RuntimeSettings.of(name, 2).withStallThresholdNanos(100 * MS);
        CoroutineRuntime runtime = name.endsWith("io") ? new IORuntime(settings) : new PoolRuntime(settings);
        scheduler = runtime;
        runtime.start();
        Thread watchdogThread = Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.getName().equals("cosched-watchdog-" + name))
                .findFirst()
                .orElseThrow();
        StallWatchdog watchdog = java.util.Objects.requireNonNull(runtime.watchdog());
        eventually(
                Duration.ofSeconds(10),
                () -> watchdog.isResting() && watchdogThread.getState() == Thread.State.WAITING,
                () -> "the watchdog never rested: " + watchdogThread.getState());

        CountDownLatch started = new CountDownLatch(1);
        Carrier stuck = runtime.carrierArray()[1];
        runtime.spawn((Runnable) () -> spinUntilReleased(started), stuck, false);
        assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
        eventually(
                Duration.ofSeconds(10),
                () -> runtime.stats().stalls() == 1 && !messages(Level.WARNING).isEmpty(),
                () -> "the stuck carrier was not reported: " + runtime.stats());
        assertThat(stuck.isStalled()).isTrue();
        assertThat(messages(Level.WARNING))
                .singleElement()
                .satisfies(m -> assertThat(m).contains("carrier " + name + "-1", "spinUntilReleased"));

        release.set(true);
        eventually(
                Duration.ofSeconds(10),
                () -> !stuck.isStalled() && watchdog.isResting(),
                () -> "the watchdog did not rest again once the carrier moved: " + runtime.stats());
    }

    /**
     * The dead-lock of carrying coroutines on event loops: a coroutine homed on loop 0 holds a lock and parks on socket I/O; loop 0's
     * thread then blocks on that lock. The coroutine's resume is queued for loop 0, which will not run it
     * until it gets the lock. With the watchdog the resume spills (to loop 1, or with one loop to the
     * JDK's default scheduler), the coroutine unlocks, and loop 0 moves again.
     */
    @ParameterizedTest(name = "{0} loops")
    @ValueSource(ints = {2, 1})
    @Tag("carrier-only")
    void spillBreaksTheDeadLockOfALoopBlockedOnALockItsOwnCoroutineHolds(int loops) throws Exception {
        IORuntime io = new IORuntime(RuntimeSettings.of("spill-io", loops).withStallThresholdNanos(50 * MS));
        scheduler = io;
        io.start();
        DeadLock d = new DeadLock(io);
        d.loopBlocksOnLock(() -> {
            d.lock.lock();
            d.lock.unlock();
            return true;
        });
        assertThat(d.loopGotLock.get(10, TimeUnit.SECONDS)).isTrue();
        assertThat(d.coroutine.toFuture().get(10, TimeUnit.SECONDS))
                .isEqualTo(loops == 2 ? "spill-io-1" : "default scheduler");
        assertThat(io.stats().stalls()).isGreaterThanOrEqualTo(1);
        // logged by the watchdog right after the spill, which may let the coroutine finish first
        eventually(Duration.ofSeconds(5), () -> !messages(Level.WARNING).isEmpty(), () -> "no stall warning");
        assertThat(messages(Level.WARNING)).anySatisfy(m -> assertThat(m).contains("carrier spill-io-0", "lock"));
    }

    @Test
    @Tag("carrier-only")
    void withoutTheWatchdogTheSameSituationDeadLocks() throws Exception {
        IORuntime io = new IORuntime(RuntimeSettings.of("nospill-io", 2).withStallThresholdNanos(NO_WATCHDOG));
        scheduler = io;
        io.start();
        DeadLock d = new DeadLock(io);
        // A timed lock, so that the test ends: the loop gives up after 500 ms without the lock.
        d.loopBlocksOnLock(() -> {
            boolean got = d.lock.tryLock(500, TimeUnit.MILLISECONDS);
            if (got) {
                d.lock.unlock();
            }
            return got;
        });
        assertThat(d.loopGotLock.get(10, TimeUnit.SECONDS)).isFalse();
        // Only once the loop gave up could the coroutine run, on its own loop.
        assertThat(d.coroutine.toFuture().get(10, TimeUnit.SECONDS)).isEqualTo("nospill-io-0");
    }

    /** The pieces of the dead-lock scenario. */
    private static final class DeadLock {
        final ReentrantLock lock = new ReentrantLock();
        final java.util.concurrent.CompletableFuture<Boolean> loopGotLock =
                new java.util.concurrent.CompletableFuture<>();
        final IORuntime io;
        CoroutineImpl<String> coroutine;

        DeadLock(IORuntime io) {
            this.io = io;
        }

        void loopBlocksOnLock(java.util.concurrent.Callable<Boolean> lockOnLoop) throws Exception {
            try (ServerSocket server = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
                AtomicReference<Socket> accepted = new AtomicReference<>();
                CountDownLatch holding = new CountDownLatch(1);
                coroutine = io.spawn(
                        (java.util.concurrent.Callable<String>) () -> {
                            try (Socket s = new Socket(server.getInetAddress(), server.getLocalPort())) {
                                lock.lock();
                                try {
                                    holding.countDown();
                                    InputStream in = s.getInputStream();
                                    in.read(); // parks on I/O while holding the lock
                                    String carrier = TestSupport.carrierName();
                                    return carrier.startsWith("ForkJoinPool") ? "default scheduler" : carrier;
                                } finally {
                                    lock.unlock();
                                }
                            }
                        },
                        io.carrier(0),
                        false);
                accepted.set(server.accept());
                assertThat(holding.await(10, TimeUnit.SECONDS)).isTrue();
                eventually(
                        Duration.ofSeconds(5),
                        () -> coroutine.state() == CoroutineState.WAITING,
                        () -> "coroutine not parked: " + coroutine.state());
                CountDownLatch loopEntered = new CountDownLatch(1);
                io.carrier(0).loop().execute(() -> {
                    loopEntered.countDown();
                    try {
                        loopGotLock.complete(lockOnLoop.call());
                    } catch (Exception e) {
                        loopGotLock.completeExceptionally(e);
                    }
                });
                assertThat(loopEntered.await(10, TimeUnit.SECONDS)).isTrue();
                try (Socket peer = accepted.get();
                        OutputStream out = peer.getOutputStream()) {
                    out.write(1); // the coroutine's read completes: its resume goes to loop 0
                    out.flush();
                    coroutine.toFuture().get(10, TimeUnit.SECONDS);
                }
            }
        }
    }

    private static void await(CountDownLatch latch) {
        try {
            latch.await(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
