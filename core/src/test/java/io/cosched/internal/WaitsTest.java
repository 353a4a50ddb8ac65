package io.cosched.internal;

import static io.cosched.TestSupport.eventually;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cosched.Coroutine;
import io.cosched.Parking;
import io.cosched.Parking.Outcome;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The one park loop ({@link Waits#park}) and its idle limit ({@link IdleWatch}): the condition, the interrupt (thrown
 * or, shielded, kept), a deadline and an idle limit, each ending a wait in its own way. Time is a clock the test
 * moves: the loop's timers and the limits read it, so nothing here waits for real time to pass.
 */
@Timeout(30)
class WaitsTest {

    private static final long MS = 1_000_000L;
    private static final long HOUR = 3_600_000 * MS;

    private final AtomicLong now = new AtomicLong();
    private final IORuntime io = new IORuntime(RuntimeSettings.of("waits", 1).withStallThresholdNanos(0), now::get);

    {
        io.start();
    }

    @AfterEach
    void stop() {
        io.stop(Duration.ofSeconds(10));
    }

    /**
     * Moves the clock to {@code nanos} and lets the loop fire what is due by then: a timer added from here makes the
     * loop look at its queue; the second begins after the first pass, with all it fired, has run.
     */
    private void advanceTo(long nanos) throws InterruptedException {
        now.set(nanos);
        for (int i = 0; i < 2; i++) {
            CountDownLatch looked = new CountDownLatch(1);
            io.timers().addTimer(Duration.ZERO, looked::countDown);
            assertThat(looked.await(10, TimeUnit.SECONDS)).isTrue();
        }
    }

    /** A condition that says how often it was asked. */
    private static final class Flag implements BooleanSupplier {
        final AtomicBoolean set = new AtomicBoolean();
        final AtomicInteger asked = new AtomicInteger();

        @Override
        public boolean getAsBoolean() {
            asked.incrementAndGet();
            return set.get();
        }
    }

    @Test
    void aConditionThatHoldsAlreadyEndsTheWaitWithoutParking() {
        Flag ready = new Flag();
        ready.set.set(true);
        Thread.currentThread().interrupt(); // would end a park at once, and is not the park's to clear
        try {
            assertThat(Waits.park(ready, Deadline.after(0), null, false, this)).isEqualTo(Outcome.READY);
            assertThat(ready.asked.get()).isEqualTo(1);
            assertThat(Thread.currentThread().isInterrupted()).isTrue();
        } finally {
            Thread.interrupted();
        }
    }

    @Test
    void aWaitEndsWhenItsConditionHoldsAndItsThreadIsWoken() throws Exception {
        Flag ready = new Flag();
        Coroutine<Outcome> waiter = io.spawn(() -> Waits.park(ready, null, null, false, this));
        eventually(Duration.ofSeconds(10), () -> ready.asked.get() >= 1, () -> "the waiter never looked");
        ready.set.set(true);
        LockSupport.unpark(waiter.thread());
        assertThat(waiter.join()).isEqualTo(Outcome.READY);
    }

    @Test
    void aDeadlineOnTheLoopsTimersEndsTheWaitWhenTheClockPassesIt() throws Exception {
        Flag never = new Flag();
        Coroutine<Outcome> waiter = io.spawn(() -> {
            Deadline limit = Deadline.after(HOUR);
            try {
                return Waits.park(never, limit, null, false, this);
            } finally {
                limit.cancel();
            }
        });
        eventually(Duration.ofSeconds(10), () -> never.asked.get() >= 1, () -> "the waiter never looked");
        advanceTo(HOUR - MS);
        assertThat(waiter.toFuture()).isNotDone();
        advanceTo(HOUR + MS);
        assertThat(waiter.join()).isEqualTo(Outcome.DEADLINE_PASSED);
        assertThat(io.timers().pending()).isZero();
    }

    @Test
    void anIdleLimitOnTheLoopsTimersEndsAWaitWithoutProgress() throws Exception {
        IdleWatch idle = new IdleWatch(io.timers(), 100 * MS, null, now::get);
        Flag never = new Flag();
        Coroutine<Outcome> waiter = io.spawn(() -> Waits.park(never, null, idle, false, this));
        eventually(Duration.ofSeconds(10), () -> never.asked.get() >= 1, () -> "the waiter never looked");
        advanceTo(99 * MS);
        assertThat(idle.passed()).isFalse();
        advanceTo(100 * MS);
        assertThat(waiter.join()).isEqualTo(Outcome.IDLE_PASSED);
        idle.close();
        assertThat(io.timers().pending()).isZero();
    }

    @Test
    void progressRestartsTheIdleLimitOfTheWaitInCourse() throws Exception {
        IdleWatch idle = new IdleWatch(io.timers(), 100 * MS, null, now::get);
        Flag never = new Flag();
        Coroutine<Outcome> waiter = io.spawn(() -> Waits.park(never, null, idle, false, this));
        eventually(Duration.ofSeconds(10), () -> never.asked.get() >= 1, () -> "the waiter never looked");
        advanceTo(60 * MS);
        idle.progress(); // the limit now runs to 160 ms
        advanceTo(120 * MS); // the watch looked at 100 ms, and looks again at 160
        assertThat(idle.passed()).isFalse();
        assertThat(waiter.toFuture()).isNotDone();
        advanceTo(159 * MS);
        assertThat(idle.passed()).isFalse();
        advanceTo(160 * MS);
        assertThat(waiter.join()).isEqualTo(Outcome.IDLE_PASSED);
        idle.close();
    }

    @Test
    void aChangeOfTheProgressProbeRestartsTheIdleLimitToo() throws Exception {
        AtomicLong pending = new AtomicLong(1000); // a connection's bytes still to write
        IdleWatch idle = new IdleWatch(io.timers(), 100 * MS, pending::get, now::get);
        Flag never = new Flag();
        Coroutine<Outcome> waiter = io.spawn(() -> Waits.park(never, null, idle, false, this));
        eventually(Duration.ofSeconds(10), () -> never.asked.get() >= 1, () -> "the waiter never looked");
        pending.set(600); // the client took some
        advanceTo(100 * MS); // the watch sees it: the limit runs to 200 ms
        assertThat(idle.passed()).isFalse();
        advanceTo(199 * MS);
        assertThat(idle.passed()).isFalse();
        advanceTo(200 * MS);
        assertThat(waiter.join()).isEqualTo(Outcome.IDLE_PASSED);
        idle.close();
    }

    @Test
    void withoutTimersAnIdleLimitIsATimedParkOnItsClock() throws Exception {
        IdleWatch idle = new IdleWatch(null, HOUR, null, now::get);
        Flag never = new Flag();
        CompletableFuture<Outcome> outcome = new CompletableFuture<>();
        Thread waiter = Thread.ofPlatform().start(() -> outcome.complete(Waits.park(never, null, idle, false, this)));
        eventually(Duration.ofSeconds(10), () -> never.asked.get() >= 2, () -> "the waiter never began");
        now.set(HOUR / 2);
        idle.progress();
        now.set(HOUR + MS);
        idle.wake(); // its timed park is an hour of real time: woken to look at the clock
        eventually(Duration.ofSeconds(10), () -> never.asked.get() >= 3, () -> "the waiter never looked again");
        assertThat(outcome).isNotDone();
        now.set(HOUR / 2 + HOUR);
        idle.wake();
        assertThat(outcome.get(10, TimeUnit.SECONDS)).isEqualTo(Outcome.IDLE_PASSED);
        waiter.join();
    }

    @Test
    void anInterruptEndsAWaitAndIsClearedForTheCallerToThrow() throws Exception {
        Flag never = new Flag();
        CompletableFuture<String> seen = new CompletableFuture<>();
        Thread waiter = Thread.ofPlatform().start(() -> {
            Outcome o = Waits.park(never, null, null, false, this);
            seen.complete(o + ", interrupted " + Thread.currentThread().isInterrupted());
        });
        eventually(Duration.ofSeconds(10), () -> never.asked.get() >= 1, () -> "the waiter never looked");
        waiter.interrupt();
        assertThat(seen.get(10, TimeUnit.SECONDS)).isEqualTo("INTERRUPTED, interrupted false");
        waiter.join();
        // the helpers built on it throw it
        AtomicBoolean onInterrupt = new AtomicBoolean();
        Thread.currentThread().interrupt();
        assertThatThrownBy(() -> Waits.parkUntil(never, this, () -> onInterrupt.set(true)))
                .isInstanceOf(InterruptedException.class);
        assertThat(onInterrupt).isTrue();
        assertThat(Thread.currentThread().isInterrupted()).isFalse();
    }

    @Test
    void aShieldedWaitKeepsAnInterruptForAfterIt() throws Exception {
        Flag ready = new Flag();
        CompletableFuture<String> seen = new CompletableFuture<>();
        Coroutine<Void> waiter = io.spawn(() -> {
            Outcome o = Waits.park(ready, null, null, true, this);
            seen.complete(o + ", interrupted " + Thread.currentThread().isInterrupted());
        });
        eventually(Duration.ofSeconds(10), () -> ready.asked.get() >= 1, () -> "the waiter never looked");
        int before = ready.asked.get();
        waiter.thread().interrupt();
        // woken by the interrupt, it looked at its condition again and parked on
        eventually(Duration.ofSeconds(10), () -> ready.asked.get() > before, () -> "the interrupt did not wake it");
        assertThat(seen).isNotDone();
        ready.set.set(true);
        LockSupport.unpark(waiter.thread());
        assertThat(seen.get(10, TimeUnit.SECONDS)).isEqualTo("READY, interrupted true");
        waiter.join();
    }

    @Test
    void theExportedFaceParksWithAnIdleLimitAndWakesTheWaiter() throws Exception {
        Parking.IdleLimit idle = Parking.idleLimit(io.timers(), Duration.ofHours(1), null);
        Flag ready = new Flag();
        Coroutine<Outcome> waiter = io.spawn(() -> Parking.park(ready, idle, this));
        eventually(Duration.ofSeconds(10), () -> ready.asked.get() >= 2, () -> "the waiter never began");
        assertThat(io.timers().pending()).as("the idle limit's one watch").isEqualTo(1);
        ready.set.set(true);
        idle.wake();
        assertThat(waiter.join()).isEqualTo(Outcome.READY);
        idle.close();
        assertThat(io.timers().pending()).isZero();
    }

    @Test
    void anIdleLimitMustBePositive() {
        assertThatThrownBy(() -> Parking.idleLimit(null, Duration.ZERO, null))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("limit: PT0S (expected: > 0)");
    }

    @Test
    void aWaitAllocatesNothingOfItsOwn() throws Exception {
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        AtomicBoolean turn = new AtomicBoolean(); // false: the waiter waits for it; the other thread sets it
        BooleanSupplier myTurn = turn::get;
        int rounds = 20_000;
        long[] allocated = new long[1];
        Thread waiter = Thread.ofPlatform().unstarted(() -> {
            long start = 0;
            for (int i = 0; i < 2 * rounds; i++) {
                if (i == rounds) { // after a warm-up, whose class loading and compilation allocate
                    start = threads.getCurrentThreadAllocatedBytes();
                }
                Waits.park(myTurn, null, null, false, this);
                turn.set(false);
            }
            allocated[0] = threads.getCurrentThreadAllocatedBytes() - start;
        });
        waiter.start();
        while (waiter.isAlive()) {
            if (!turn.get()) {
                turn.set(true);
                LockSupport.unpark(waiter);
            } else {
                Thread.onSpinWait();
            }
        }
        waiter.join();
        assertThat(allocated[0]).as("bytes allocated by %d waits", rounds).isLessThan(1024);
    }
}
