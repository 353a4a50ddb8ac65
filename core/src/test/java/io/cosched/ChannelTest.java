package io.cosched;

import static io.cosched.TestSupport.eventually;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(60)
class ChannelTest {

    private IOManager io;

    @BeforeEach
    void start() {
        io = IOManager.builder().name("chan").threads(2).build();
        io.start();
    }

    @AfterEach
    void stop() {
        io.stop(Duration.ofSeconds(10));
    }

    @Test
    void aRendezvousSendReturnsOnlyOnceAReceiverHasTakenTheItem() throws Exception {
        Channel<String> ch = new Channel<>(0);
        List<String> events = new CopyOnWriteArrayList<>();
        Coroutine<Void> sender = io.spawn(() -> {
            ch.send("hello");
            events.add("sent");
            return null;
        });
        eventually(Duration.ofSeconds(5), () -> sender.state() == CoroutineState.WAITING, sender::toString);
        assertThat(events).isEmpty();
        assertThat(ch.size()).isZero();
        events.add("receiving");
        assertThat(io.spawn(() -> ch.receive()).join()).isEqualTo("hello");
        sender.join();
        assertThat(events).containsExactly("receiving", "sent");
    }

    @Test
    void aFullBoundedChannelHoldsSendersBackUntilAReceiverMakesRoom() throws Exception {
        Channel<Integer> ch = new Channel<>(2);
        ch.send(1);
        ch.send(2);
        assertThat(ch.send(3, Duration.ofMillis(20))).as("full: times out").isFalse();
        Coroutine<Void> blocked = io.spawn(() -> {
            ch.send(3);
            return null;
        });
        eventually(Duration.ofSeconds(5), () -> blocked.state() == CoroutineState.WAITING, blocked::toString);
        assertThat(ch.receive()).isEqualTo(1);
        blocked.join();
        assertThat(ch.receive()).isEqualTo(2);
        assertThat(ch.receive()).isEqualTo(3);
        assertThat(ch.receive(Duration.ofMillis(10)))
                .as("empty: times out with null")
                .isNull();
    }

    @Test
    void closeFailsSendersAndLetsReceiversDrainWhatWasAccepted() throws Exception {
        Channel<String> ch = new Channel<>(2);
        ch.send("a");
        ch.send("b");
        Coroutine<Void> waitingSender = io.spawn(() -> {
            ch.send("c");
            return null;
        });
        eventually(
                Duration.ofSeconds(5), () -> waitingSender.state() == CoroutineState.WAITING, waitingSender::toString);
        ch.close();
        ch.close();
        assertThatThrownBy(waitingSender::join)
                .isInstanceOf(ExecutionException.class)
                .cause()
                .isInstanceOf(ChannelClosedException.class);
        assertThatThrownBy(() -> ch.send("d")).isInstanceOf(ChannelClosedException.class);
        assertThat(ch.receive()).isEqualTo("a");
        assertThat(ch.receive()).isEqualTo("b");
        assertThatThrownBy(ch::receive).isInstanceOf(ChannelClosedException.class);
        assertThat(ch.isClosed()).isTrue();
    }

    @Test
    void closeWakesWaitingReceiversAndIterationEnds() throws Exception {
        Channel<Integer> ch = new Channel<>(0);
        Coroutine<List<Integer>> consumer = io.spawn(() -> {
            List<Integer> got = new ArrayList<>();
            for (int x : ch) {
                got.add(x);
            }
            return got;
        });
        for (int i = 0; i < 3; i++) {
            ch.send(i);
        }
        ch.close();
        assertThat(consumer.join()).containsExactly(0, 1, 2);
    }

    @Test
    void manyProducersAndConsumersDeliverEveryItemExactlyOnce() throws Exception {
        for (int capacity : new int[] {0, 1, 64}) {
            Channel<Long> ch = new Channel<>(capacity);
            int producers = 4;
            int perProducer = 5_000;
            WaitGroup produced = new WaitGroup(producers);
            AtomicLong sum = new AtomicLong();
            AtomicLong count = new AtomicLong();
            List<Coroutine<Void>> consumers = new ArrayList<>();
            for (int c = 0; c < 4; c++) {
                consumers.add(io.spawn(() -> {
                    for (long v : ch) {
                        sum.addAndGet(v);
                        count.incrementAndGet();
                    }
                    return null;
                }));
            }
            for (int p = 0; p < producers; p++) {
                long base = (long) p * perProducer;
                io.execute(() -> {
                    try {
                        for (long i = 1; i <= perProducer; i++) {
                            ch.send(base + i);
                        }
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    } finally {
                        produced.done();
                    }
                });
            }
            produced.await();
            ch.close();
            for (Coroutine<Void> c : consumers) {
                c.join();
            }
            long n = (long) producers * perProducer;
            assertThat(count.get()).as("capacity " + capacity).isEqualTo(n);
            assertThat(sum.get()).as("capacity " + capacity).isEqualTo(n * (n + 1) / 2);
        }
    }

    @Test
    void badArgumentsAreNamed() {
        assertThatThrownBy(() -> new Channel<>(-1)).hasMessage("capacity: -1 (expected: >= 0)");
        assertThatThrownBy(() -> new Channel<String>(1).send(null)).hasMessageContaining("item: null");
    }
}
