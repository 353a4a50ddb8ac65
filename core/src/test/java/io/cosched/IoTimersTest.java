package io.cosched;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Timers on real event loops. Outcomes are awaited through latches; "never fired" is shown by a
 * later timer on the same loop firing first, since a loop fires its timers in deadline order.
 */
@Timeout(60)
class IoTimersTest {

    private IOManager io;

    @BeforeEach
    void start() {
        io = IOManager.builder().name("timers").threads(2).build();
        io.start();
    }

    @AfterEach
    void stop() {
        if (io != null) {
            io.stop(Duration.ofSeconds(10));
        }
    }

    @Test
    void aTimerTaskRunsOnAnEventLoopThread() throws Exception {
        CountDownLatch fired = new CountDownLatch(1);
        String[] thread = new String[1];
        io.timers().addTimer(Duration.ofMillis(5), () -> {
            thread[0] = Thread.currentThread().getName();
            fired.countDown();
        });
        assertThat(fired.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(thread[0]).matches("timers-[01]");
    }

    @Test
    void aCancelledTimerNeverFiresWhileALaterOneOnTheSameLoopDoes() throws Exception {
        List<String> fired = new CopyOnWriteArrayList<>();
        CountDownLatch later = new CountDownLatch(1);
        // from inside a coroutine bound to loop 0, so both timers live on that loop
        io.spawnOn(0, () -> {
                    Timer doomed = io.timers().addTimer(Duration.ofMillis(20), () -> fired.add("cancelled"));
                    io.timers().addTimer(Duration.ofMillis(60), () -> {
                        fired.add("later");
                        later.countDown();
                    });
                    assertThat(doomed.cancel()).isTrue();
                    return null;
                })
                .join();
        assertThat(later.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(fired).containsExactly("later");
    }

    @Test
    void aTimerCancelledFromAnotherThreadNeverFires() throws Exception {
        List<String> fired = new CopyOnWriteArrayList<>();
        for (int i = 0; i < 200; i++) {
            Timer t = io.timers().addTimer(Duration.ofMillis(30), () -> fired.add("cancelled"));
            assertThat(t.cancel()).isTrue();
        }
        // one later timer per loop (added round-robin) proves both loops got past the deadline
        CountDownLatch both = new CountDownLatch(2);
        io.timers().addTimer(Duration.ofMillis(80), both::countDown);
        io.timers().addTimer(Duration.ofMillis(80), both::countDown);
        assertThat(both.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(fired).isEmpty();
        assertThat(io.timers().pending()).isZero();
    }

    @Test
    void aRecurringTimerRepeatsUntilCancelled() throws Exception {
        AtomicInteger ticks = new AtomicInteger();
        CountDownLatch five = new CountDownLatch(5);
        Timer t = io.timers().addRecurringTimer(Duration.ofMillis(5), () -> {
            ticks.incrementAndGet();
            five.countDown();
        });
        assertThat(five.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(io.timers().pending()).isEqualTo(1);
        assertThat(t.cancel()).isTrue();
        int atCancel = ticks.get();
        // a one-shot added after the cancel fires after any tick that could still have been due
        CountDownLatch after = new CountDownLatch(2);
        io.timers().addTimer(Duration.ofMillis(30), after::countDown);
        io.timers().addTimer(Duration.ofMillis(30), after::countDown);
        assertThat(after.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(ticks.get()).isLessThanOrEqualTo(atCancel + 1); // a tick already running when cancel() ran
        assertThat(io.timers().pending()).isZero();
    }

    /**
     * The timers are added and moved within one step of a coroutine, and none is due within 20 s of
     * being added until it is moved: neither a descheduled step nor a loop flagged as stalled (whose
     * timers another thread fires) can make one fire before its reset, in carrier or fallback mode.
     */
    @Test
    void refreshAndResetMoveTheDeadline() throws Exception {
        List<String> order = new CopyOnWriteArrayList<>();
        CountDownLatch done = new CountDownLatch(2);
        io.spawnOn(1, () -> {
                    Timer c = io.timers().addTimer(Duration.ofSeconds(30), () -> {
                        order.add("c");
                        done.countDown();
                    });
                    io.timers().addTimer(Duration.ofSeconds(20), () -> {
                        order.add("b");
                        done.countDown();
                    });
                    Timer a = io.timers().addTimer(Duration.ofSeconds(25), () -> {
                        order.add("a");
                        done.countDown();
                    });
                    // nothing is due within 20 s until these two lines ran; b stays where it was
                    assertThat(c.reset(Duration.ofMillis(20), false)).isTrue(); // c: 20 ms after it was added
                    assertThat(a.reset(Duration.ofMillis(100), true)).isTrue(); // a: 100 ms from now
                    return null;
                })
                .join();
        assertThat(done.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(order).containsExactly("c", "a"); // both moved before b, which has not fired
    }

    @Test
    void timersAddedFromAPlainThreadAreMovedByOtherThreadsToo() throws Exception {
        List<String> order = new CopyOnWriteArrayList<>();
        CountDownLatch done = new CountDownLatch(2);
        Timer slow = io.timers().addTimer(Duration.ofMillis(500), () -> {
            order.add("refreshed");
            done.countDown();
        });
        Thread.ofPlatform().start(() -> slow.reset(Duration.ofMillis(1), true)).join();
        io.timers().addTimer(Duration.ofSeconds(1), () -> {
            order.add("last");
            done.countDown();
        });
        assertThat(done.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(order).containsExactly("refreshed", "last");
    }

    @Test
    @Tag("carrier-only")
    void aTimerAddedInsideACoroutineFiresOnThatCoroutinesLoop() throws Exception {
        for (int loopIndex = 0; loopIndex < 2; loopIndex++) {
            CountDownLatch fired = new CountDownLatch(1);
            String[] where = new String[1];
            io.spawnOn(
                            loopIndex,
                            () -> io.timers().addTimer(Duration.ofMillis(1), () -> {
                                where[0] = Thread.currentThread().getName();
                                fired.countDown();
                            }))
                    .join();
            assertThat(fired.await(10, TimeUnit.SECONDS)).isTrue();
            assertThat(where[0]).isEqualTo("timers-" + loopIndex);
        }
    }

    @Test
    void aThrowingTaskDoesNotStopItsRecurringTimerOrTheLoop() throws Exception {
        CountDownLatch three = new CountDownLatch(3);
        Timer t = io.timers().addRecurringTimer(Duration.ofMillis(5), () -> {
            three.countDown();
            throw new IllegalStateException("expected by the test");
        });
        assertThat(three.await(10, TimeUnit.SECONDS)).isTrue();
        t.cancel();
        assertThat(io.spawn(() -> "loop alive").join()).isEqualTo("loop alive");
    }

    @Test
    void aConditionTimerRunsWhileTheConditionIsReachable() throws Exception {
        Object condition = new Object();
        CountDownLatch fired = new CountDownLatch(1);
        io.timers().addConditionTimer(Duration.ofMillis(5), fired::countDown, condition);
        assertThat(fired.await(10, TimeUnit.SECONDS)).isTrue();
        java.lang.ref.Reference.reachabilityFence(condition);
    }

    @Test
    void badArgumentsNameTheArgumentAndTheRule() {
        assertThatThrownBy(() -> io.timers().addTimer(Duration.ofMillis(-5), () -> {}))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("delay: PT-0.005S (expected: >= 0)");
        assertThatThrownBy(() -> io.timers().addRecurringTimer(Duration.ZERO, () -> {}))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("period: PT0S (expected: > 0)");
        assertThatThrownBy(() -> io.timers().addTimer(Duration.ofMillis(1), null))
                .isInstanceOf(NullPointerException.class)
                .hasMessageContaining("task: null");
        assertThatThrownBy(() -> io.timers().addConditionTimer(Duration.ofMillis(1), () -> {}, null))
                .isInstanceOf(NullPointerException.class)
                .hasMessageContaining("condition: null");
    }

    @Test
    void aStoppedIOManagerTakesNoTimersAndCancelsPendingOnes() {
        Timer pendingAtStop = io.timers().addTimer(Duration.ofHours(1), () -> {});
        assertThat(io.timers().pending()).isEqualTo(1);
        assertThat(io.stop(Duration.ofSeconds(5))).isTrue();
        assertThat(io.timers().pending()).isZero();
        assertThat(pendingAtStop.cancel()).as("already cancelled by stop").isFalse();
        assertThatThrownBy(() -> io.timers().addTimer(Duration.ofMillis(1), () -> {}))
                .isInstanceOf(RejectedExecutionException.class)
                .hasMessageContaining("scheduler 'timers' is STOPPED");
        io = null;
    }
}
