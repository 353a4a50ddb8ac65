package io.cosched.spring.web.shedding;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import io.cosched.spring.web.CoschedWebStats;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The readiness verdict's windows and hysteresis, on a clock the test moves. */
class SheddingReadinessTest {

    private static final long S = 1_000_000_000L;

    private final Counts stats = new Counts();
    private long now;
    private final SheddingReadiness readiness =
            new SheddingReadiness(stats, 0.1, 0.01, Duration.ofSeconds(10), () -> now);

    /** The two numbers readiness reads, moved by the test. */
    private static final class Counts implements CoschedWebStats {
        private long started;
        private long shed;
        private int inFlight;

        void countCoroutine() {
            started++;
        }

        void countShed() {
            shed++;
        }

        @Override
        public int inFlight() {
            return inFlight;
        }

        @Override
        public long timedOut() {
            return 0;
        }

        @Override
        public long shed() {
            return shed;
        }

        @Override
        public long shedEarly() {
            return 0;
        }

        @Override
        public int limit() {
            return 100;
        }

        @Override
        public int queued() {
            return 0;
        }

        @Override
        public long queueTimedOut() {
            return 0;
        }

        @Override
        public long cancelled() {
            return 0;
        }

        @Override
        public long coroutinesStarted() {
            return started;
        }

        @Override
        public long inlined() {
            return 0;
        }

        @Override
        public long offLoop() {
            return 0;
        }
    }

    /** {@code started} coroutine requests and {@code shed} shed ones in the next {@code seconds}, then a look. */
    private SheddingReadiness.Verdict after(long seconds, int started, int shed) {
        for (int i = 0; i < started; i++) {
            stats.countCoroutine();
        }
        for (int i = 0; i < shed; i++) {
            stats.countShed();
        }
        now += seconds * S;
        return readiness.look();
    }

    @Test
    void refusesOnceAWindowShedsTheShareAndAcceptsOnlyAfterTheHoldWasCalm() {
        assertThat(readiness.look().refusing())
                .as("the first look has no window")
                .isFalse();
        assertThat(after(5, 1000, 50).refusing()).as("5 % shed").isFalse();
        SheddingReadiness.Verdict out = after(5, 900, 100);
        assertThat(out.refusing()).as("10 % shed").isTrue();
        assertThat(out.shedShare()).isEqualTo(0.1);
        assertThat(out.shed()).isEqualTo(100);

        assertThat(after(5, 50, 1).refusing()).as("2 %: not calm yet").isTrue();
        assertThat(after(5, 10, 0).refusing()).as("calm for 5 s of 10").isTrue();
        assertThat(after(4, 0, 0).refusing()).as("calm for 9 s").isTrue();
        assertThat(after(1, 0, 0).refusing()).as("calm for 10 s").isFalse();
    }

    @Test
    void aSpikeDuringTheHoldStartsItOver() {
        readiness.look();
        assertThat(after(5, 10, 10).refusing()).isTrue();
        assertThat(after(8, 100, 0).refusing()).isTrue();
        assertThat(after(1, 100, 20).refusing()).as("shedding again").isTrue();
        assertThat(after(8, 100, 0).refusing()).isTrue();
        assertThat(after(2, 100, 0).refusing()).isFalse();
    }

    @Test
    void quietWindowsWithEverySlotStillTakenAreNotCalm() {
        readiness.look();
        stats.inFlight = 100; // the limit: what overloaded it still runs, out of rotation
        assertThat(after(1, 0, 100).refusing()).isTrue();
        assertThat(after(10, 0, 0).refusing())
                .as("no traffic for the hold, but no free slot either")
                .isTrue();
        SheddingReadiness.Verdict full = after(10, 0, 0);
        assertThat(full.refusing()).isTrue();
        assertThat(full.inFlight()).isEqualTo(100);
        assertThat(full.limit()).isEqualTo(100);
        stats.inFlight = 99;
        assertThat(after(5, 0, 0).refusing())
                .as("a free slot: calm for 5 s of 10")
                .isTrue();
        assertThat(after(5, 0, 0).refusing()).as("calm for 10 s").isFalse();
    }

    @Test
    void looksCloserThanASecondReturnTheLastVerdict() {
        readiness.look();
        now += S / 2;
        stats.countShed();
        assertThat(readiness.look().refusing())
                .as("half a second: no window yet")
                .isFalse();
        now += S / 2;
        assertThat(readiness.look().refusing())
                .as("one shed of one over a full second")
                .isTrue();
        assertThat(after(0, 0, 0).refusing()).isTrue();
    }

    @Test
    void noTrafficIsCalm() {
        readiness.look();
        assertThat(after(1, 0, 0).refusing()).isFalse();
        assertThat(after(1, 0, 0).shedShare()).isZero();
    }

    @Test
    void badSettingsAreRefusedWithTheRule() {
        assertThatIllegalArgumentException()
                .isThrownBy(() -> new SheddingReadiness(stats, 0, 0.01, Duration.ZERO))
                .withMessage("refuse-at: 0.0 (expected: > 0 and <= 1)");
        assertThatIllegalArgumentException()
                .isThrownBy(() -> new SheddingReadiness(stats, 0.1, 0.2, Duration.ZERO))
                .withMessage("accept-below: 0.2 (expected: > 0 and <= its refuse-at, 0.1)");
        assertThatIllegalArgumentException()
                .isThrownBy(() -> new SheddingReadiness(stats, 0.1, 0.01, Duration.ofSeconds(-1)))
                .withMessage("hold: PT-1S (expected: >= 0)");
    }
}
