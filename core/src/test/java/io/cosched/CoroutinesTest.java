package io.cosched;

import static io.cosched.TestSupport.carrierName;
import static io.cosched.TestSupport.eventually;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(60)
class CoroutinesTest {

    private IOManager io;

    @BeforeEach
    void start() {
        io = IOManager.builder().name("co").threads(2).build();
        io.start();
    }

    @AfterEach
    void stop() {
        io.stop(Duration.ofSeconds(10));
    }

    @Test
    void currentIsTheRunningCoroutineInsideAndEmptyOutside() throws Exception {
        assertThat(Coroutines.current()).isEmpty();
        Coroutine<?>[] inside = new Coroutine<?>[1];
        Coroutine<Void> c = io.spawn(() -> {
            inside[0] = Coroutines.current().orElseThrow();
            return null;
        });
        c.join();
        assertThat(inside[0]).isSameAs(c);
        assertThat(c.state()).isEqualTo(CoroutineState.DONE);
        assertThat(c.name()).isEqualTo("co-co-" + c.id());
    }

    @Test
    void anAttachmentSetInsideIsReadAndClearedThroughTheHandle() throws Exception {
        Coroutine<Object> c = io.spawn(() -> {
            Coroutines.current().orElseThrow().attach("job 7, step 2");
            return Coroutines.current().orElseThrow().attachment();
        });
        assertThat(c.join()).isEqualTo("job 7, step 2");
        assertThat(c.attachment()).isEqualTo("job 7, step 2");
        c.attach(null);
        assertThat(c.attachment()).isNull();
    }

    /**
     * The loop is asked to wake a little before a sleep's deadline (Linux's timer slack makes it late by as much): a
     * wake that comes before the deadline must wait out the rest, never end the sleep early.
     */
    @Test
    void aSleepNeverEndsBeforeItsDuration() throws Exception {
        long[] shortest = io.spawn(() -> {
                    long[] took = {Long.MAX_VALUE, Long.MAX_VALUE};
                    for (int i = 0; i < 300; i++) {
                        Duration d = i % 2 == 0 ? Duration.ofMillis(1) : Duration.ofNanos(70_000);
                        long t0 = System.nanoTime();
                        Coroutines.sleep(d);
                        took[i % 2] = Math.min(took[i % 2], System.nanoTime() - t0);
                    }
                    return took;
                })
                .join();
        assertThat(shortest[0]).as("shortest sleep of 1 ms, in ns").isGreaterThanOrEqualTo(1_000_000);
        assertThat(shortest[1]).as("shortest sleep of 70 us, in ns").isGreaterThanOrEqualTo(70_000);
    }

    @Test
    void aSleepingCoroutineIsCountedAsSleepingAndCancelWakesIt() throws Exception {
        Coroutine<Void> sleeper = io.spawn(() -> {
            Coroutines.sleep(Duration.ofMinutes(5));
            return null;
        });
        eventually(Duration.ofSeconds(5), () -> sleeper.state() == CoroutineState.SLEEPING, sleeper::toString);
        assertThat(io.stats().sleeping()).isEqualTo(1);
        assertThat(io.timers().pending()).as("sleep parks on a loop timer").isEqualTo(1);
        assertThat(sleeper.cancel()).isTrue();
        assertThat(sleeper.state()).isEqualTo(CoroutineState.CANCELLED);
        assertThatThrownBy(sleeper::join).isInstanceOf(CancellationException.class);
        eventually(
                Duration.ofSeconds(5),
                () -> io.stats().coroutines() == 0,
                () -> io.stats().toString());
        assertThat(io.stats().sleeping()).isZero();
        assertThat(io.timers().pending()).as("the wake-up timer was cancelled").isZero();
        assertThat(sleeper.cancel()).as("second cancel").isFalse();
    }

    @Test
    void sleepOutsideACoroutineIsAPlainSleep() throws Exception {
        long t0 = System.nanoTime();
        Coroutines.sleep(Duration.ofMillis(20));
        assertThat(System.nanoTime() - t0).isGreaterThanOrEqualTo(TimeUnit.MILLISECONDS.toNanos(20));
        assertThatThrownBy(() -> Coroutines.sleep(Duration.ofMillis(-1)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("duration: PT-0.001S (expected: >= 0)");
    }

    @Test
    @Tag("carrier-only")
    void awaitResumesOnTheLoopItParkedOn() throws Exception {
        for (int loopIndex = 0; loopIndex < 2; loopIndex++) {
            CompletableFuture<String> later = new CompletableFuture<>();
            Coroutine<List<String>> c = io.spawnOn(loopIndex, () -> {
                String before = carrierName();
                String value = Coroutines.await(later);
                return List.of(before, carrierName(), value);
            });
            eventually(Duration.ofSeconds(5), () -> c.state() == CoroutineState.WAITING, c::toString);
            Thread.ofPlatform().start(() -> later.complete("v")); // completed by a foreign thread
            assertThat(c.join()).containsExactly("co-" + loopIndex, "co-" + loopIndex, "v");
        }
    }

    @Test
    void awaitReturnsTheValueOrRethrowsTheFailure() throws Exception {
        assertThat(io.spawn(() -> Coroutines.await(CompletableFuture.completedFuture(7)))
                        .join())
                .isEqualTo(7);
        CompletableFuture<Integer> failing = CompletableFuture.supplyAsync(() -> {
            throw new IllegalArgumentException("bad");
        });
        assertThatThrownBy(() -> io.spawn(() -> Coroutines.await(failing)).join())
                .isInstanceOf(ExecutionException.class)
                .cause()
                .isInstanceOf(CompletionException.class)
                .cause()
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("bad");
    }

    @Test
    void awaitWithATimeoutThrowsAndLeavesTheStageAlone() throws Exception {
        CompletableFuture<String> never = new CompletableFuture<>();
        Coroutine<Void> c = io.spawn(() -> {
            Coroutines.await(never, Duration.ofMillis(30));
            return null;
        });
        assertThatThrownBy(c::join)
                .cause()
                .isInstanceOf(AwaitTimeoutException.class)
                .hasCauseInstanceOf(TimeoutException.class)
                .hasMessageContaining("await timed out after PT0.03S");
        assertThat(never).as("not cancelled: await does not own it").isNotDone();
        assertThat(io.timers().pending()).isZero();
        // the same from a plain thread
        assertThatThrownBy(() -> Coroutines.await(never, Duration.ofMillis(10)))
                .isInstanceOf(AwaitTimeoutException.class);
    }

    @Test
    void awaitIsInterruptedByCancel() throws Exception {
        CompletableFuture<String> never = new CompletableFuture<>();
        CountDownLatch interrupted = new CountDownLatch(1);
        Coroutine<Void> c = io.spawn(() -> {
            try {
                Coroutines.await(never);
            } catch (InterruptedException e) {
                interrupted.countDown();
            }
            return null;
        });
        eventually(
                Duration.ofSeconds(5),
                () -> io.stats().waiting() == 1,
                () -> io.stats().toString());
        c.cancel();
        assertThat(interrupted.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(never).isNotDone();
    }

    @Test
    void computeRunsOffTheLoopWhileTheLoopServesOtherCoroutines() throws Exception {
        try (IOManager one = IOManager.builder().name("single").threads(1).build()) {
            one.start();
            CountDownLatch loopWasFree = new CountDownLatch(1);
            Coroutine<String> c = one.spawn(() -> Coroutines.compute(() -> {
                // blocks the compute thread until another coroutine of the single loop has run
                if (!loopWasFree.await(10, TimeUnit.SECONDS)) {
                    throw new IllegalStateException("the loop was held by compute()");
                }
                return Thread.currentThread().getName();
            }));
            one.spawn(loopWasFree::countDown);
            assertThat(c.join()).startsWith("cosched-compute-");
        }
    }

    @Test
    void computeRethrowsWhatTheWorkThrew() {
        assertThatThrownBy(() -> io.spawn(() -> Coroutines.compute(() -> {
                            throw new IOException("disk");
                        }))
                        .join())
                .cause()
                .isInstanceOf(CompletionException.class)
                .cause()
                .isInstanceOf(IOException.class);
    }

    @Test
    void goFromAPlainThreadRunsOnAStartedIOManager() throws Exception {
        CountDownLatch ran = new CountDownLatch(1);
        Coroutine<Void> c = Coroutines.go(ran::countDown);
        assertThat(ran.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(c.thread().isVirtual()).isTrue();
    }

    @Test
    void aResumeThatArrivesBeforeTheSuspendIsNotLost() throws Exception {
        CountDownLatch resumed = new CountDownLatch(1);
        Coroutine<String> c = io.spawn(() -> {
            resumed.await();
            Coroutines.suspend(); // the resume came first: returns at once
            return "passed";
        });
        c.resume();
        resumed.countDown();
        assertThat(c.toFuture().get(10, TimeUnit.SECONDS)).isEqualTo("passed");
    }

    @Test
    void suspendWaitsForResumeAndIgnoresSpuriousWakeUps() throws Exception {
        List<String> events = new CopyOnWriteArrayList<>();
        Coroutine<Void> c = io.spawn(() -> {
            Coroutines.suspend();
            events.add("resumed");
            return null;
        });
        eventually(Duration.ofSeconds(5), () -> c.state() == CoroutineState.WAITING, c::toString);
        for (int i = 0; i < 10; i++) {
            LockSupport.unpark(c.thread()); // not a resume
        }
        // still suspended after the stray unparks were processed: it parks again each time
        eventually(Duration.ofSeconds(5), () -> c.state() == CoroutineState.WAITING, c::toString);
        assertThat(events).isEmpty();
        events.add("resuming");
        c.resume();
        c.join();
        assertThat(events).containsExactly("resuming", "resumed");
    }

    @Test
    void suspendOutsideACoroutineIsRefused() {
        assertThatThrownBy(Coroutines::suspend)
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("suspend() called outside a coroutine");
    }

    @Test
    @Tag("carrier-only")
    void yieldNowLetsTheOtherCoroutinesOfTheLoopRunFirst() throws Exception {
        List<String> order = new CopyOnWriteArrayList<>();
        Coroutine<Void> a = io.spawnOn(0, () -> {
            Coroutines.suspend();
            order.add("a1");
            Coroutines.yieldNow();
            order.add("a2");
            return null;
        });
        Coroutine<Void> b = io.spawnOn(0, () -> {
            Coroutines.suspend();
            order.add("b1");
            Coroutines.yieldNow();
            order.add("b2");
            return null;
        });
        eventually(
                Duration.ofSeconds(5),
                () -> a.state() == CoroutineState.WAITING && b.state() == CoroutineState.WAITING,
                () -> a + " " + b);
        // resumed together from the loop thread, so both steps are queued before either runs
        io.eventLoopGroup().iterator().next().execute(() -> {
            a.resume();
            b.resume();
        });
        a.join();
        b.join();
        assertThat(order).containsExactly("a1", "b1", "a2", "b2");
    }

    @Test
    void aCoroutinesResultCannotBeCompletedFromOutsideButCancellingTheFutureCancelsIt() throws Exception {
        Coroutine<String> c = io.spawn(() -> {
            Coroutines.sleep(Duration.ofMinutes(1));
            return "no";
        });
        CompletableFuture<String> f = c.toFuture();
        assertThatThrownBy(() -> f.complete("forged")).isInstanceOf(UnsupportedOperationException.class);
        assertThat(f.cancel(true)).isTrue();
        assertThat(c.state()).isEqualTo(CoroutineState.CANCELLED);
        assertThat(f.isCancelled()).isTrue();
        assertThat(f.thenApply(String::length).isCompletedExceptionally()).isTrue();
    }

    @Test
    void aFailingCoroutineEndsFailedWithItsException() {
        Coroutine<Object> c = io.spawn(() -> {
            throw new IllegalStateException("nope");
        });
        assertThatThrownBy(c::join)
                .isInstanceOf(ExecutionException.class)
                .cause()
                .hasMessage("nope");
        assertThat(c.state()).isEqualTo(CoroutineState.FAILED);
    }
}
