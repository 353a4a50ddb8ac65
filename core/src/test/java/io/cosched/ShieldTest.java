package io.cosched;

import static io.cosched.TestSupport.eventually;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cosched.net.LoopSocketFactory;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * An interrupt through {@link Coroutine#interrupt()} waits while the coroutine is inside a shield: the
 * shield's action runs instead, and the thread is interrupted when the last shield closes.
 */
@Timeout(60)
class ShieldTest {

    private IOManager io;

    @BeforeEach
    void start() {
        io = IOManager.builder()
                .name("shield-io")
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
    void withoutAShieldInterruptWakesAParkedCoroutineAtOnce() throws Exception {
        CountDownLatch parked = new CountDownLatch(1);
        Coroutine<String> c = io.spawn(() -> {
            parked.countDown();
            try {
                Coroutines.sleep(Duration.ofSeconds(30));
                return "slept";
            } catch (InterruptedException e) {
                return "interrupted";
            }
        });
        assertThat(parked.await(10, TimeUnit.SECONDS)).isTrue();
        eventually(Duration.ofSeconds(5), () -> c.state() == CoroutineState.SLEEPING, c::toString);
        c.interrupt();
        assertThat(c.toFuture().get(10, TimeUnit.SECONDS)).isEqualTo("interrupted");
    }

    @Test
    void insideAShieldTheActionRunsAndTheInterruptWaitsForTheClose() throws Exception {
        CountDownLatch inside = new CountDownLatch(1);
        CountDownLatch proceed = new CountDownLatch(1);
        AtomicInteger actions = new AtomicInteger();
        List<String> events = new CopyOnWriteArrayList<>();
        Coroutine<Void> c = io.spawn(() -> {
            try (Shield shield = Coroutines.shield(actions::incrementAndGet)) {
                inside.countDown();
                Coroutines.await(java.util.concurrent.CompletableFuture.runAsync(() -> awaitQuietly(proceed)));
                events.add("shielded wait ended, pending=" + shield.interruptPending() + ", interrupted="
                        + Thread.currentThread().isInterrupted());
            }
            events.add("closed, interrupted=" + Thread.currentThread().isInterrupted());
            try {
                Coroutines.sleep(Duration.ofSeconds(30));
                events.add("slept");
            } catch (InterruptedException e) {
                events.add("sleep interrupted");
            }
            return null;
        });
        assertThat(inside.await(10, TimeUnit.SECONDS)).isTrue();
        c.interrupt();
        c.interrupt(); // a second interrupt adds nothing
        assertThat(actions.get())
                .as("the action ran on the interrupting thread, once")
                .isEqualTo(1);
        proceed.countDown();
        c.toFuture().get(10, TimeUnit.SECONDS);
        assertThat(events)
                .containsExactly(
                        "shielded wait ended, pending=true, interrupted=false",
                        "closed, interrupted=true",
                        "sleep interrupted");
    }

    @Test
    void nestedShieldsDeliverWhenTheLastOneClosesAndEachActsOnce() throws Exception {
        CountDownLatch inside = new CountDownLatch(1);
        CountDownLatch proceed = new CountDownLatch(1);
        AtomicInteger outerActs = new AtomicInteger();
        AtomicInteger innerActs = new AtomicInteger();
        AtomicInteger lateActs = new AtomicInteger();
        AtomicReference<String> seen = new AtomicReference<>("");
        Coroutine<Void> c = io.spawn(() -> {
            Shield outer = Coroutines.shield(outerActs::incrementAndGet);
            Shield inner = Coroutines.shield(innerActs::incrementAndGet);
            inside.countDown();
            Coroutines.await(java.util.concurrent.CompletableFuture.runAsync(() -> awaitQuietly(proceed)));
            try (Shield late = Coroutines.shield(lateActs::incrementAndGet)) {
                seen.set(seen.get() + "late acted " + lateActs.get() + "; ");
            }
            inner.close();
            seen.set(seen.get() + "inner closed " + Thread.currentThread().isInterrupted() + "; ");
            outer.close();
            outer.close(); // twice is once
            seen.set(seen.get() + "outer closed " + Thread.interrupted());
            return null;
        });
        assertThat(inside.await(10, TimeUnit.SECONDS)).isTrue();
        c.interrupt();
        assertThat(outerActs.get()).isEqualTo(1);
        assertThat(innerActs.get()).isEqualTo(1);
        proceed.countDown();
        c.toFuture().get(10, TimeUnit.SECONDS);
        assertThat(seen.get()).isEqualTo("late acted 1; inner closed false; outer closed true");
    }

    @Test
    void cancelCompletesTheResultAtOnceAndInterruptsAfterTheShield() throws Exception {
        CountDownLatch inside = new CountDownLatch(1);
        CountDownLatch proceed = new CountDownLatch(1);
        AtomicReference<String> afterShield = new AtomicReference<>();
        Coroutine<Void> c = io.spawn(() -> {
            try (Shield ignored = Coroutines.shield(() -> {})) {
                inside.countDown();
                Coroutines.await(java.util.concurrent.CompletableFuture.runAsync(() -> awaitQuietly(proceed)));
            }
            afterShield.set("interrupted=" + Thread.currentThread().isInterrupted());
            return null;
        });
        assertThat(inside.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(c.cancel()).isTrue();
        assertThatThrownBy(() -> c.join()).isInstanceOf(CancellationException.class);
        proceed.countDown();
        eventually(Duration.ofSeconds(10), () -> afterShield.get() != null, c::toString);
        assertThat(afterShield.get()).isEqualTo("interrupted=true");
    }

    @Test
    void outsideACoroutineAShieldDoesNothing() {
        Shield s = Coroutines.shield(() -> {
            throw new AssertionError("never");
        });
        assertThat(s.interruptPending()).isFalse();
        s.close();
        assertThat(Thread.currentThread().isInterrupted()).isFalse();
    }

    @Test
    void anInterruptDuringAShieldedSocketReadLeavesTheConnectionUsable() throws Exception {
        try (ServerSocket server = new ServerSocket(0, 5, InetAddress.getLoopbackAddress())) {
            CountDownLatch asked = new CountDownLatch(1);
            CountDownLatch answer = new CountDownLatch(1);
            Thread peer = Thread.ofPlatform().daemon().start(() -> {
                try (Socket s = server.accept()) {
                    InputStream in = s.getInputStream();
                    OutputStream out = s.getOutputStream();
                    for (int i = 0; i < 2; i++) {
                        in.read();
                        asked.countDown();
                        answer.await();
                        out.write('A' + i);
                    }
                } catch (Exception ignored) {
                    // the test sees it from its side
                }
            });
            Coroutine<String> c = io.spawn(() -> {
                StringBuilder got = new StringBuilder();
                try (Socket s = new LoopSocketFactory(io)
                        .createSocket(InetAddress.getLoopbackAddress(), server.getLocalPort())) {
                    try (Shield ignored =
                            Coroutines.shield(answer::countDown)) { // the action ends the wait: the peer answers
                        s.getOutputStream().write('?');
                        got.append((char) s.getInputStream().read());
                    }
                    got.append(" interrupted=").append(Thread.currentThread().isInterrupted());
                    Thread.interrupted(); // cleared: the connection is used once more
                    s.getOutputStream().write('?');
                    got.append(' ').append((char) s.getInputStream().read());
                    got.append(" open=").append(!s.isClosed());
                }
                return got.toString();
            });
            assertThat(asked.await(10, TimeUnit.SECONDS)).isTrue();
            eventually(Duration.ofSeconds(5), () -> c.state() == CoroutineState.WAITING, c::toString);
            c.interrupt();
            assertThat(c.toFuture().get(10, TimeUnit.SECONDS)).isEqualTo("A interrupted=true B open=true");
            peer.join(Duration.ofSeconds(10));
        }
    }

    @Test
    void aFailingActionIsLoggedAndTheInterruptStillArrives() throws Exception {
        CountDownLatch inside = new CountDownLatch(1);
        CountDownLatch proceed = new CountDownLatch(1);
        Coroutine<Boolean> c = io.spawn(() -> {
            try (Shield ignored = Coroutines.shield(() -> {
                throw new IllegalStateException("action failed");
            })) {
                inside.countDown();
                Coroutines.await(java.util.concurrent.CompletableFuture.runAsync(() -> awaitQuietly(proceed)));
            }
            return Thread.currentThread().isInterrupted();
        });
        assertThat(inside.await(10, TimeUnit.SECONDS)).isTrue();
        c.interrupt();
        proceed.countDown();
        assertThat(c.toFuture().get(10, TimeUnit.SECONDS)).isTrue();
    }

    private static void awaitQuietly(CountDownLatch latch) {
        try {
            latch.await(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
