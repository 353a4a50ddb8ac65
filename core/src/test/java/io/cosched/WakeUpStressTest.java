package io.cosched;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Races on the wake-up paths. A lost wake-up leaves a submission unserved while its carrier
 * sleeps; these loops would then hang and hit the timeout.
 */
@Tag("carrier-only")
class WakeUpStressTest {

    @Test
    @Timeout(120)
    void everySubmissionToParkedPoolCarriersIsServed() throws Exception {
        try (PoolScheduler pool =
                PoolScheduler.builder().name("stress").threads(2).build()) {
            pool.start();
            // one at a time: carriers go idle between submissions, so each one races a parking carrier
            for (int i = 0; i < 100_000; i++) {
                assertThat(pool.spawn(() -> 1).join()).isEqualTo(1);
            }
            // from four threads at once, bound and unbound
            AtomicLong served = new AtomicLong();
            Thread[] submitters = new Thread[4];
            for (int t = 0; t < submitters.length; t++) {
                int carrier = t % 2;
                submitters[t] = Thread.ofPlatform().start(() -> {
                    for (int i = 0; i < 25_000; i++) {
                        try {
                            if (i % 2 == 0) {
                                pool.spawn(() -> served.incrementAndGet()).join();
                            } else {
                                pool.spawnOn(carrier, () -> served.incrementAndGet())
                                        .join();
                            }
                        } catch (Exception e) {
                            throw new AssertionError(e);
                        }
                    }
                });
            }
            for (Thread t : submitters) {
                t.join();
            }
            assertThat(served).hasValue(100_000);
        }
    }

    @Test
    @Timeout(120)
    void coroutinesOnDifferentLoopsResumingEachOtherNeverStall() throws Exception {
        try (IOManager io = IOManager.builder().name("pingpong").threads(2).build()) {
            io.start();
            int rounds = 100_000;
            Coroutine<?>[] peers = new Coroutine<?>[2];
            // a latch, not suspend(): a resume used as a start gate could merge with a peer's resume
            java.util.concurrent.CountDownLatch bothExist = new java.util.concurrent.CountDownLatch(1);
            for (int side = 0; side < 2; side++) {
                int me = side;
                peers[side] = io.spawnOn(side, () -> {
                    bothExist.await();
                    for (int r = 0; r < rounds; r++) {
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
    }

    @Test
    @Timeout(120)
    void spawnsFromManyThreadsOntoLoopsAreAllServed() throws Exception {
        try (IOManager io = IOManager.builder().name("spawn-stress").threads(2).build()) {
            io.start();
            AtomicLong served = new AtomicLong();
            Thread[] submitters = new Thread[4];
            for (int t = 0; t < submitters.length; t++) {
                submitters[t] = Thread.ofPlatform().start(() -> {
                    for (int i = 0; i < 25_000; i++) {
                        try {
                            io.spawn(() -> served.incrementAndGet()).join();
                        } catch (Exception e) {
                            throw new AssertionError(e);
                        }
                    }
                });
            }
            for (Thread t : submitters) {
                t.join();
            }
            assertThat(served).hasValue(100_000);
            assertThat(io.stop(Duration.ofSeconds(10))).isTrue();
        }
    }
}
