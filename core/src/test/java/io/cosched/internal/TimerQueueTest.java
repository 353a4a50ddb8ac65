package io.cosched.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.ref.WeakReference;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The timer queue driven by a manual clock: no sleeping, every deadline exact. */
@Timeout(60)
class TimerQueueTest {

    private static final long MS = 1_000_000L;

    /** A loop of one thread (the test's), with a clock the test moves. */
    static final class ManualLoop implements TimerHost {
        long now = 1_000 * MS;
        final TimerQueue queue = new TimerQueue(now);
        int pending;
        final List<String> log = new ArrayList<>();

        TimerImpl add(long delayMs, boolean recurring, String name) {
            return add(delayMs, recurring, () -> log.add(name), null);
        }

        TimerImpl add(long delayMs, boolean recurring, Runnable task, Object condition) {
            TimerImpl t = new TimerImpl(this, now, delayMs * MS, recurring, task, condition, null);
            pending++;
            queue.push(t, t.deadline());
            return t;
        }

        void advance(long ms) {
            now += ms * MS;
            queue.expire(now, t -> {
                if (!t.recurring) {
                    pending--;
                }
                t.runTask();
            });
        }

        @Override
        public long nanoTime() {
            return now;
        }

        @Override
        public void cancelled(TimerImpl timer) {
            pending--;
            queue.forget(timer);
        }

        @Override
        public void moved(TimerImpl timer) {
            queue.sync(timer);
        }
    }

    private final ManualLoop loop = new ManualLoop();

    @Test
    void aOneShotTimerFiresOnceAtItsDeadline() {
        loop.add(100, false, "a");
        loop.advance(99);
        assertThat(loop.log).isEmpty();
        loop.advance(1);
        assertThat(loop.log).containsExactly("a");
        loop.advance(1_000);
        assertThat(loop.log).containsExactly("a");
        assertThat(loop.pending).isZero();
    }

    @Test
    void timersFireInDeadlineOrderAndInAddOrderForEqualDeadlines() {
        loop.add(30, false, "c");
        loop.add(10, false, "a1");
        loop.add(20, false, "b");
        loop.add(10, false, "a2");
        loop.add(0, false, "now");
        loop.advance(0);
        assertThat(loop.log).containsExactly("now");
        loop.advance(100);
        assertThat(loop.log).containsExactly("now", "a1", "a2", "b", "c");
    }

    @Test
    void aRecurringTimerFiresEveryPeriodUntilCancelled() {
        TimerImpl t = loop.add(10, true, "tick");
        for (int i = 1; i <= 5; i++) {
            loop.advance(10);
            assertThat(loop.log).hasSize(i);
        }
        assertThat(t.cancel()).isTrue();
        loop.advance(100);
        assertThat(loop.log).hasSize(5);
        assertThat(loop.pending).isZero();
        assertThat(t.cancel()).as("second cancel").isFalse();
    }

    @Test
    void aRecurringTimerThatFellBehindSkipsMissedRunsInsteadOfBunchingThem() {
        loop.add(10, true, "tick");
        loop.advance(55); // five periods late: one run, not five
        assertThat(loop.log).hasSize(1);
        loop.advance(9);
        assertThat(loop.log).hasSize(1);
        loop.advance(1); // next due one period after the late run
        assertThat(loop.log).hasSize(2);
    }

    @Test
    void aCancelledTimerNeverFires() {
        TimerImpl t = loop.add(10, false, "x");
        loop.add(20, false, "later");
        assertThat(t.cancel()).isTrue();
        assertThat(loop.pending).isEqualTo(1);
        loop.advance(100);
        assertThat(loop.log).containsExactly("later");
    }

    @Test
    void cancelAfterFiringReportsFalse() {
        TimerImpl t = loop.add(10, false, "x");
        loop.advance(10);
        assertThat(t.cancel()).isFalse();
        assertThat(t.refresh()).isFalse();
        assertThat(t.reset(Duration.ofMillis(5), true)).isFalse();
    }

    @Test
    void refreshRestartsTheSameDelayFromNow() {
        TimerImpl t = loop.add(100, false, "x");
        loop.advance(60);
        assertThat(t.refresh()).isTrue();
        loop.advance(60);
        assertThat(loop.log).as("100 ms after the refresh, not after the add").isEmpty();
        loop.advance(40);
        assertThat(loop.log).containsExactly("x");
    }

    @Test
    void resetFromNowAndFromTheOriginalStart() {
        TimerImpl fromNow = loop.add(100, false, "fromNow");
        TimerImpl fromStart = loop.add(100, false, "fromStart");
        loop.advance(30);
        assertThat(fromNow.reset(Duration.ofMillis(50), true)).isTrue(); // due at 30 + 50 = 80
        assertThat(fromStart.reset(Duration.ofMillis(50), false)).isTrue(); // due at 0 + 50 = 50
        loop.advance(19);
        assertThat(loop.log).isEmpty();
        loop.advance(1);
        assertThat(loop.log).containsExactly("fromStart");
        loop.advance(29);
        assertThat(loop.log).containsExactly("fromStart");
        loop.advance(1);
        assertThat(loop.log).containsExactly("fromStart", "fromNow");
    }

    @Test
    void resetToAnEarlierDeadlineThatHasAlreadyPassedFiresOnTheNextExpiry() {
        TimerImpl t = loop.add(100, false, "x");
        loop.advance(60);
        t.reset(Duration.ofMillis(10), false); // 0 + 10 < now
        loop.advance(0);
        assertThat(loop.log).containsExactly("x");
    }

    @Test
    void resetChangesTheRecurringPeriod() {
        TimerImpl t = loop.add(10, true, "tick");
        loop.advance(10);
        t.reset(Duration.ofMillis(25), true);
        loop.advance(24);
        assertThat(loop.log).hasSize(1);
        loop.advance(1);
        assertThat(loop.log).hasSize(2);
        loop.advance(25);
        assertThat(loop.log).hasSize(3);
    }

    @Test
    void resetRejectsNegativeDelaysNamingTheArgument() {
        TimerImpl t = loop.add(10, false, "x");
        assertThatThrownBy(() -> t.reset(Duration.ofMillis(-1), true))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("delay: PT-0.001S (expected: >= 0)");
        TimerImpl r = loop.add(10, true, "r");
        assertThatThrownBy(() -> r.reset(Duration.ZERO, true)).hasMessage("delay: PT0S (expected: > 0)");
    }

    @Test
    void aConditionTimerRunsWhileItsConditionIsAliveAndSkipsOnceItIsCollected() {
        Object alive = new Object();
        AtomicInteger ran = new AtomicInteger();
        loop.add(10, false, ran::incrementAndGet, alive);
        loop.advance(10);
        assertThat(ran).hasValue(1);

        WeakReference<Object> probe = addWithCollectableCondition(ran);
        for (int i = 0; i < 50 && probe.get() != null; i++) {
            System.gc();
        }
        assertThat(probe.get()).as("condition collected").isNull();
        loop.advance(10);
        assertThat(ran).as("skipped").hasValue(1);
        assertThat(loop.pending).isZero();
        java.lang.ref.Reference.reachabilityFence(alive);
    }

    private WeakReference<Object> addWithCollectableCondition(AtomicInteger ran) {
        Object condition = new Object();
        loop.add(10, false, ran::incrementAndGet, condition);
        return new WeakReference<>(condition);
    }

    @Test
    void aTaskMayCancelItsOwnRecurringTimer() {
        AtomicInteger runs = new AtomicInteger();
        TimerImpl[] self = new TimerImpl[1];
        self[0] = loop.add(
                10,
                true,
                () -> {
                    if (runs.incrementAndGet() == 3) {
                        self[0].cancel();
                    }
                },
                null);
        loop.advance(10);
        loop.advance(10);
        loop.advance(10);
        loop.advance(100);
        assertThat(runs).hasValue(3);
        assertThat(loop.queue.isEmpty()).isTrue();
    }

    @Test
    void manyCancelledTimersDoNotAccumulateInTheHeap() {
        for (int i = 0; i < 100; i++) {
            loop.add(60_000, false, "keep" + i);
        }
        for (int i = 0; i < 200_000; i++) {
            loop.add(30_000 + i % 1000, false, "drop").cancel();
        }
        assertThat(loop.pending).isEqualTo(100);
        assertThat(loop.queue.entries())
                .as("cancelled timers are unlinked at once")
                .isEqualTo(100);
        loop.advance(120_000);
        assertThat(loop.log).hasSize(100).allMatch(s -> s.startsWith("keep"));
    }

    @Test
    void timersAcrossEveryLevelOfTheWheelFireOnceNeverEarlyAndOnTheFirstExpiryAfterTheirDeadline() {
        java.util.Random random = new java.util.Random(42);
        long[] scales = {0, 1, 50, 3_000, 200_000, 15_000_000, 2_000_000_000L}; // ms: every level
        java.util.Map<TimerImpl, long[]> live = new java.util.HashMap<>(); // timer -> {deadline, fired}
        List<TimerImpl> all = new ArrayList<>();
        TimerHost host = loop;
        for (int step = 0; step < 20_000; step++) {
            int action = random.nextInt(10);
            if (action < 5) {
                long scale = scales[random.nextInt(scales.length)];
                long delay = scale == 0 ? 0 : (long) (random.nextDouble() * scale * MS) + random.nextInt(1000);
                long[] record = new long[2];
                TimerImpl[] self = new TimerImpl[1];
                self[0] = new TimerImpl(
                        host,
                        loop.now,
                        delay,
                        false,
                        () -> {
                            assertThat(record[1]).as("fired once").isZero();
                            assertThat(loop.now).as("never early").isGreaterThanOrEqualTo(record[0]);
                            record[1] = loop.now;
                        },
                        null,
                        null);
                record[0] = loop.now + delay;
                loop.queue.push(self[0], self[0].deadline());
                live.put(self[0], record);
                all.add(self[0]);
            } else if (action < 6 && !all.isEmpty()) {
                TimerImpl t = all.get(random.nextInt(all.size()));
                if (t.cancel()) {
                    live.remove(t);
                }
            } else if (action < 7 && !all.isEmpty()) {
                TimerImpl t = all.get(random.nextInt(all.size()));
                long delay = (long) (random.nextDouble() * scales[random.nextInt(scales.length)] * MS);
                if (t.reset(Duration.ofNanos(delay), true)) {
                    live.get(t)[0] = loop.now + delay;
                }
            } else {
                long jump = random.nextInt(4) == 0
                        ? (long) (random.nextDouble() * 30_000_000L * MS)
                        : random.nextInt(5_000) * 1_000L;
                loop.now += jump;
                loop.queue.expire(loop.now, TimerImpl::runTask);
                // everything due by now has fired: nothing is late past the expiry that covers it
                for (long[] record : live.values()) {
                    if (record[0] <= loop.now) {
                        assertThat(record[1])
                                .as("fired by the first expiry after its deadline")
                                .isNotZero();
                    }
                }
            }
        }
        loop.now += 3_000_000_000L * MS;
        loop.queue.expire(loop.now, TimerImpl::runTask);
        assertThat(live.values()).allMatch(r -> r[1] != 0);
        assertThat(loop.queue.isEmpty()).isTrue();
    }

    @Test
    void theLoopIsWokenAtTheExactDeadlineOfATimerDueWithinTheCurrentTick() {
        loop.add(0, false, "now");
        TimerImpl soon = new TimerImpl(loop, loop.now, 300_000, false, () -> loop.log.add("300us"), null, null);
        loop.queue.push(soon, soon.deadline());
        loop.advance(0);
        assertThat(loop.log).containsExactly("now");
        assertThat(loop.queue.nextWakeNanos()).isEqualTo(soon.deadline());
        loop.now += 299_999;
        loop.queue.expire(loop.now, TimerImpl::runTask);
        assertThat(loop.log).containsExactly("now");
        loop.now += 1;
        loop.queue.expire(loop.now, TimerImpl::runTask);
        assertThat(loop.log).containsExactly("now", "300us");
    }

    @Test
    void aLoneOneMillisecondTimerWakesItsLoopOnceAtItsDeadlineNotAtItsTicksStart() {
        loop.now += (1L << TimerQueue.TICK_SHIFT) / 2; // half a tick in: the deadline falls in the next tick
        loop.queue.expire(loop.now, TimerImpl::runTask);
        TimerImpl sleep = loop.add(1, false, "1ms");
        int wakes = 0;
        while (loop.log.isEmpty()) {
            loop.now = loop.queue.nextWakeNanos();
            loop.queue.expire(loop.now, TimerImpl::runTask);
            wakes++;
        }
        assertThat(wakes).isEqualTo(1);
        assertThat(loop.now).isEqualTo(sleep.deadline());
    }

    @Test
    void aSlotWhoseEarliestTimerWasCancelledWakesEarlyOnceAndFiresTheRestAtTheirDeadlines() {
        loop.now += (1L << TimerQueue.TICK_SHIFT) / 8;
        loop.queue.expire(loop.now, TimerImpl::runTask);
        TimerImpl first = new TimerImpl(loop, loop.now, MS, false, () -> loop.log.add("first"), null, null);
        TimerImpl second = new TimerImpl(loop, loop.now, MS + 300_000, false, () -> loop.log.add("second"), null, null);
        loop.queue.push(first, first.deadline());
        loop.queue.push(second, second.deadline()); // the same level-0 slot, 300 us later
        assertThat(first.cancel()).isTrue();
        List<Long> wakes = new ArrayList<>();
        while (loop.log.isEmpty()) {
            loop.now = loop.queue.nextWakeNanos();
            wakes.add(loop.now);
            loop.queue.expire(loop.now, TimerImpl::runTask);
            assertThat(loop.log.isEmpty() || loop.now >= second.deadline())
                    .as("never early")
                    .isTrue();
        }
        assertThat(loop.log).containsExactly("second");
        assertThat(wakes).containsExactly(first.deadline(), second.deadline());
    }

    @Test
    void aTimerAnHourAwayIsVisitedOnlyAtTheSlotsThatCascadeIt() {
        loop.add(3_600_000, false, "hour");
        int wakes = 0;
        while (loop.log.isEmpty()) {
            long wake = loop.queue.nextWakeNanos();
            assertThat(wake).isGreaterThan(loop.now);
            loop.now = wake;
            loop.queue.expire(loop.now, TimerImpl::runTask);
            wakes++;
        }
        assertThat(loop.now).isGreaterThanOrEqualTo(1_000 * MS + 3_600_000 * MS);
        assertThat(wakes)
                .as("one wake per level it cascades through, not one per tick")
                .isLessThanOrEqualTo(7);
    }
}
