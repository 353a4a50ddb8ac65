package io.cosched.jdbc;

import static io.cosched.TestSupport.eventually;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cosched.Coroutine;
import io.cosched.IOManager;
import java.sql.SQLTransientConnectionException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(60)
class LoopGateTest {

    private IOManager io;
    private final LoopGate gate = new LoopGate(1, () -> {}, () -> "pool-loop0");

    @BeforeEach
    void start() {
        io = IOManager.builder()
                .name("gate-io")
                .threads(1)
                .stallThreshold(Duration.ZERO)
                .build();
        io.start();
    }

    @AfterEach
    void stop() {
        io.stop(Duration.ofSeconds(10));
    }

    @Test
    @Tag("carrier-only") // the wake-ups are counted by the loop's carrier
    void turnsGoToTheWaitersInTheOrderTheyCameAndTheGiverResumesThem() throws Exception {
        List<String> order = new CopyOnWriteArrayList<>();
        gate.enter(Duration.ofSeconds(10)); // the test holds the only turn
        List<Coroutine<Void>> waiters = new java.util.ArrayList<>();
        for (String name : List.of("a", "b", "c")) {
            waiters.add(io.spawn(() -> {
                gate.enter(Duration.ofSeconds(10));
                order.add(name);
                gate.exit(); // hands the turn to the next in line, from this loop
                return null;
            }));
            eventually(
                    Duration.ofSeconds(5), () -> gate.state().equals("in=1, waiting=" + (waiters.size())), gate::state);
        }
        long remote = io.stats().remoteWakeups();
        gate.exit(); // the test's thread wakes a; a wakes b, b wakes c, on the loop
        for (Coroutine<Void> w : waiters) {
            w.join();
        }
        assertThat(order).containsExactly("a", "b", "c");
        assertThat(io.stats().remoteWakeups() - remote).isEqualTo(1);
        assertThat(gate.state()).isEqualTo("in=0, waiting=0");
    }

    @Test
    void aNewcomerQueuesBehindWaitersEvenWhenATurnIsFree() throws Exception {
        gate.enter(Duration.ofSeconds(10));
        Coroutine<Void> waiter = io.spawn(() -> {
            gate.enter(Duration.ofSeconds(10));
            return null;
        });
        eventually(Duration.ofSeconds(5), () -> gate.state().equals("in=1, waiting=1"), gate::state);
        gate.exit(); // the turn is the waiter's now, even before it runs
        assertThat(gate.state()).isEqualTo("in=1, waiting=0");
        waiter.join();
    }

    @Test
    void aWaitPastTheTimeoutFailsAsHikariDoesAndLeavesTheLine() throws Exception {
        gate.enter(Duration.ofSeconds(10));
        long started = System.nanoTime();
        assertThatThrownBy(() -> io.spawn(() -> {
                            gate.enter(Duration.ofMillis(100));
                            return null;
                        })
                        .join())
                .cause()
                .isInstanceOf(SQLTransientConnectionException.class)
                .hasMessage("pool-loop0 - Connection is not available, request timed out after 100ms");
        assertThat(Duration.ofNanos(System.nanoTime() - started)).isGreaterThanOrEqualTo(Duration.ofMillis(100));
        assertThat(gate.state()).isEqualTo("in=1, waiting=0");
        gate.exit();
        assertThat(gate.state()).isEqualTo("in=0, waiting=0");
    }

    @Test
    void anInterruptedWaiterLeavesTheLineCancelledNotWithADatabaseError() throws Exception {
        gate.enter(Duration.ofSeconds(10));
        AtomicReference<RuntimeException> failure = new AtomicReference<>();
        AtomicBoolean stillInterrupted = new AtomicBoolean();
        Coroutine<Void> waiter = io.spawn(() -> {
            try {
                gate.enter(Duration.ofSeconds(30));
            } catch (java.util.concurrent.CancellationException e) {
                failure.set(e);
                stillInterrupted.set(Thread.currentThread().isInterrupted());
            }
            return null;
        });
        eventually(Duration.ofSeconds(5), () -> gate.state().equals("in=1, waiting=1"), gate::state);
        waiter.cancel();
        eventually(Duration.ofSeconds(5), () -> failure.get() != null, gate::state);
        assertThat((Throwable) failure.get())
                .hasMessage("pool-loop0 - no connection for an interrupted borrower (its "
                        + "request was cancelled, or it timed out)")
                .hasCauseInstanceOf(InterruptedException.class);
        assertThat(stillInterrupted.get()).isTrue();
        assertThat(gate.state()).isEqualTo("in=1, waiting=0");
        gate.exit();
        assertThat(gate.state()).isEqualTo("in=0, waiting=0");
    }
}
