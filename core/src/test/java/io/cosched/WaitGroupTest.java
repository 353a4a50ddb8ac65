package io.cosched;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(60)
class WaitGroupTest {

    @Test
    void awaitReturnsWhenEveryMemberIsDone() throws Exception {
        try (IOManager io = IOManager.builder().name("wg").threads(2).build()) {
            io.start();
            WaitGroup wg = new WaitGroup();
            AtomicInteger done = new AtomicInteger();
            for (int i = 0; i < 100; i++) {
                wg.add(1);
                io.execute(() -> {
                    try {
                        Coroutines.sleep(Duration.ofMillis(5));
                        done.incrementAndGet();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    } finally {
                        wg.done();
                    }
                });
            }
            wg.await();
            assertThat(done).hasValue(100);
            assertThat(wg.count()).isZero();
        }
    }

    @Test
    void aTimedAwaitReportsWhetherTheGroupFinished() throws Exception {
        WaitGroup wg = new WaitGroup(1);
        assertThat(wg.await(Duration.ofMillis(10))).isFalse();
        wg.done();
        assertThat(wg.await(Duration.ofMillis(10))).isTrue();
    }

    @Test
    void moreDonesThanAddsIsAnError() {
        WaitGroup wg = new WaitGroup();
        assertThatThrownBy(wg::done)
                .isInstanceOf(IllegalStateException.class)
                .hasMessage("WaitGroup counter: -1 (expected: >= 0; done() was called more often than add())");
    }
}
