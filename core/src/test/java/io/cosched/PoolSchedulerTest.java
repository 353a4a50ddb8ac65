package io.cosched;

import static io.cosched.TestSupport.carrierName;
import static io.cosched.TestSupport.eventually;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cosched.internal.PoolRuntime;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(120)
class PoolSchedulerTest {

    private PoolScheduler pool;

    @AfterEach
    void stop() {
        if (pool != null) {
            pool.stop(Duration.ofSeconds(10));
        }
    }

    static PoolRuntime runtime(PoolScheduler pool) {
        return (PoolRuntime) pool;
    }

    static List<Thread> carrierThreads(String prefix) {
        List<Thread> threads = new ArrayList<>();
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (t.getName().startsWith(prefix)) {
                threads.add(t);
            }
        }
        return threads;
    }

    @Test
    @Tag("carrier-only")
    void boundCoroutinesRunEveryStepOnTheirCarrier() throws Exception {
        pool = PoolScheduler.builder().name("bound").threads(3).build();
        pool.start();
        List<Coroutine<Set<String>>> all = new ArrayList<>();
        for (int i = 0; i < 30; i++) {
            int carrier = i % 3;
            all.add(pool.spawnOn(carrier, () -> {
                Set<String> seen = ConcurrentHashMap.newKeySet();
                for (int step = 0; step < 20; step++) {
                    seen.add(carrierName());
                    if (step % 2 == 0) {
                        Coroutines.yieldNow();
                    } else {
                        Coroutines.sleep(Duration.ofMillis(1));
                    }
                }
                seen.add(carrierName());
                return seen;
            }));
        }
        for (int i = 0; i < all.size(); i++) {
            assertThat(all.get(i).join()).containsExactly("bound-" + (i % 3));
        }
    }

    @Test
    @Tag("carrier-only")
    void withUseCallerTheThreadCallingStopDrainsTheQueueAsTheLastCarrier() throws Exception {
        pool = PoolScheduler.builder().name("caller").threads(1).useCaller(true).build();
        pool.start();
        assertThat(carrierThreads("caller-"))
                .as("threads - 1 = no carrier thread of its own")
                .isEmpty();
        List<Coroutine<String>> queued = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            queued.add(pool.spawn(
                    () -> carrierName() + "/" + Thread.currentThread().isVirtual()));
        }
        assertThat(queued).allMatch(c -> c.state() == CoroutineState.READY);
        assertThat(pool.stats().queueDepth()).isEqualTo(10);

        String callerName = Thread.currentThread().getName();
        assertThat(pool.stop(Duration.ofSeconds(10))).isTrue();
        pool = null;
        for (Coroutine<String> c : queued) {
            assertThat(c.join()).isEqualTo("caller-0/true");
        }
        assertThat(Thread.currentThread().getName()).as("name restored").isEqualTo(callerName);
    }

    @Test
    @Tag("carrier-only")
    void runOnCallerServesBoundWorkUntilStopped() throws Exception {
        pool = PoolScheduler.builder().name("serve").threads(2).useCaller(true).build();
        pool.start();
        CountDownLatch returned = new CountDownLatch(1);
        Thread caller = Thread.ofPlatform().name("my-main").start(() -> {
            pool.runOnCaller();
            returned.countDown();
        });
        assertThat(pool.spawnOn(1, TestSupport::carrierName).join()).isEqualTo("serve-1");
        assertThat(pool.spawnOn(0, TestSupport::carrierName).join()).isEqualTo("serve-0");
        assertThat(returned.getCount()).isEqualTo(1);
        assertThat(pool.stop(Duration.ofSeconds(10))).isTrue();
        assertThat(returned.await(10, TimeUnit.SECONDS))
                .as("runOnCaller returned after stop")
                .isTrue();
        caller.join();
        pool = null;
    }

    @Test
    void runOnCallerWithoutUseCallerIsRefused() {
        pool = PoolScheduler.builder().name("plain").threads(1).build();
        pool.start();
        assertThatThrownBy(pool::runOnCaller)
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("useCaller(false)");
    }

    @Test
    @Tag("carrier-only")
    void idleCarriersParkAndOneSubmissionWakesExactlyOne() throws Exception {
        pool = PoolScheduler.builder().name("idle").threads(4).build();
        pool.start();
        PoolRuntime rt = runtime(pool);
        eventually(Duration.ofSeconds(10), () -> rt.idleCarriers() == 4, () -> "idle=" + rt.idleCarriers());
        List<Thread> threads = carrierThreads("idle-");
        assertThat(threads).hasSize(4);
        eventually(
                Duration.ofSeconds(10),
                () -> threads.stream().allMatch(t -> t.getState() == Thread.State.WAITING),
                () -> threads.stream()
                        .map(t -> t.getName() + "=" + t.getState())
                        .toList()
                        .toString());

        for (int round = 0; round < 20; round++) {
            eventually(Duration.ofSeconds(10), () -> rt.idleCarriers() == 4, () -> "idle=" + rt.idleCarriers());
            long before = rt.wakeUps();
            pool.spawn(() -> 1).join();
            assertThat(rt.wakeUps() - before).as("wake-ups for one submission").isEqualTo(1);
        }
    }

    @Test
    void stopDrainsQueuedWork() throws Exception {
        pool = PoolScheduler.builder().name("drain").threads(1).build();
        pool.start();
        AtomicInteger done = new AtomicInteger();
        for (int i = 0; i < 1000; i++) {
            pool.execute(() -> {
                Coroutines.yieldNow();
                done.incrementAndGet();
            });
        }
        assertThat(pool.stop(Duration.ofSeconds(30))).isTrue();
        assertThat(done).hasValue(1000);
        assertThat(pool.stats().completedTasks()).isEqualTo(1000);
        pool = null;
    }

    @Test
    void stopReportsWhatItCouldNotFinishAndLosesNothing() throws Exception {
        pool = PoolScheduler.builder().name("stuck").threads(2).build();
        pool.start();
        CountDownLatch release = new CountDownLatch(1);
        Coroutine<String> stuck = pool.spawn(() -> {
            release.await();
            Coroutines.yieldNow(); // a continuation that arrives after the carriers are gone
            return "done";
        });
        // a park inside a plain JDK call is visible to carriers only; in fallback mode it counts as running
        CoroutineState parked = TestSupport.carrierMode() ? CoroutineState.WAITING : CoroutineState.RUNNING;
        eventually(Duration.ofSeconds(5), () -> stuck.state() == parked, stuck::toString);
        assertThat(pool.stop(Duration.ofMillis(50))).isFalse();
        assertThat(pool.stats().coroutines()).isEqualTo(1);
        if (TestSupport.carrierMode()) {
            assertThat(pool.stats().waiting()).isEqualTo(1);
        }
        release.countDown();
        assertThat(stuck.toFuture().get(10, TimeUnit.SECONDS)).isEqualTo("done");
        assertThat(pool.stats().coroutines()).isZero();
        pool = null;
    }

    @Test
    void anExceptionFromAnExecutedTaskReachesTheUncaughtExceptionHandler() throws Exception {
        pool = PoolScheduler.builder().name("uncaught").threads(1).build();
        pool.start();
        CountDownLatch reported = new CountDownLatch(1);
        Thread.UncaughtExceptionHandler previous = Thread.getDefaultUncaughtExceptionHandler();
        Thread.setDefaultUncaughtExceptionHandler((t, e) -> {
            if ("boom".equals(e.getMessage())) {
                reported.countDown();
            }
        });
        try {
            pool.execute(() -> {
                throw new IllegalStateException("boom");
            });
            assertThat(reported.await(10, TimeUnit.SECONDS)).isTrue();
        } finally {
            Thread.setDefaultUncaughtExceptionHandler(previous);
        }
    }
}
