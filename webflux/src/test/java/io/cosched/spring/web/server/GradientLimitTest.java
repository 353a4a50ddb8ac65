package io.cosched.spring.web.server;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The adaptive limit, driven by a clock the test moves: windows of requests with a latency and an in-flight count. */
class GradientLimitTest {

    private static final long MS = 1_000_000L;

    private long now;

    /** One window of 20 requests of {@code latencyMs} with {@code inFlight} held, 100 ms long; the limit after it. */
    private int window(GradientLimit limit, long latencyMs, int inFlight) {
        for (int i = 0; i < 20; i++) {
            now += 5 * MS;
            limit.sample(latencyMs * MS, inFlight, now);
        }
        return limit.limit();
    }

    @Test
    void itStartsAtTheCeilingAndStaysThereWhileTheLatencyHolds() {
        GradientLimit limit = new GradientLimit(10, 200, 2.0, now);
        assertThat(limit.limit()).isEqualTo(200);
        for (int i = 0; i < 50; i++) {
            assertThat(window(limit, 20, 150)).isEqualTo(200);
        }
        assertThat(limit.baselineNanos()).isEqualTo(20 * MS);
    }

    @Test
    void aBackendTenTimesSlowerHalvesTheLimitPerWindowDownToItsFloorAndNoLower() {
        GradientLimit limit = new GradientLimit(10, 400, 2.0, now);
        for (int i = 0; i < 20; i++) {
            window(limit, 20, 30);
        }
        assertThat(limit.limit()).isEqualTo(400);
        assertThat(window(limit, 200, 400)).isEqualTo(200);
        assertThat(window(limit, 200, 200)).isEqualTo(100);
        assertThat(window(limit, 200, 100)).isEqualTo(50);
        for (int i = 0; i < 20; i++) {
            window(limit, 200, 50);
        }
        assertThat(limit.limit()).isEqualTo(10);
        // within the tolerance it shrinks in proportion, not by half
        GradientLimit mild = new GradientLimit(10, 400, 2.0, now);
        window(mild, 20, 300);
        assertThat(window(mild, 50, 300)).isEqualTo(320); // 400 * 2 * 20 / 50
    }

    @Test
    void itGrowsBackBySquareRootsOnlyWhileAtLeastHalfOfItIsInUse() {
        GradientLimit limit = new GradientLimit(16, 1000, 2.0, now);
        window(limit, 10, 500);
        for (int i = 0; i < 10; i++) {
            window(limit, 100, 50); // ten times slower: down to the floor
        }
        assertThat(limit.limit()).isEqualTo(16);
        window(limit, 10, 4); // fast again, the baseline back down half-way per window
        window(limit, 10, 4);
        int idle = limit.limit();
        for (int i = 0; i < 10; i++) {
            assertThat(window(limit, 10, 4))
                    .as("a quarter in use proves nothing")
                    .isEqualTo(idle);
        }
        assertThat(window(limit, 10, 16)).isEqualTo(20); // 16 + 4
        assertThat(window(limit, 10, 20)).isEqualTo(24); // 20 + sqrt(20), rounded down
    }

    @Test
    void aSlowdownThatLastsIsLearntWithinMinutesAndTheLimitGrowsBack() {
        GradientLimit limit = new GradientLimit(10, 1000, 2.0, now);
        window(limit, 10, 500);
        for (int i = 0; i < 300; i++) { // 30 s ten times slower: held at the floor throughout
            window(limit, 100, 10);
        }
        assertThat(limit.limit()).isEqualTo(10);
        assertThat(limit.baselineNanos()).isBetween(30 * MS, 50 * MS);
        for (int i = 0; i < 3_000; i++) { // five more minutes: the new latency is the baseline
            window(limit, 100, limit.limit());
        }
        assertThat(limit.baselineNanos()).isGreaterThan(95 * MS);
        assertThat(limit.limit()).as("grown back to the ceiling").isEqualTo(1000);
    }

    @Test
    void aWindowWaitsForTenRequestsUnlessASecondHasPassed() {
        GradientLimit limit = new GradientLimit(10, 100, 2.0, now);
        window(limit, 10, 80);
        for (int i = 0; i < 5; i++) {
            now += 100 * MS;
            limit.sample(1000 * MS, 80, now);
        }
        assertThat(limit.limit())
                .as("five slow requests in half a second: no window yet")
                .isEqualTo(100);
        now += 600 * MS;
        limit.sample(1000 * MS, 80, now);
        assertThat(limit.limit()).as("a second passed: the six decide").isEqualTo(50);
    }

    @Test
    void afterAQuietSpellOneSlowRequestDecidesNothing() {
        GradientLimit limit = new GradientLimit(10, 100, 2.0, now);
        window(limit, 10, 80);
        now += 600_000 * MS; // ten quiet minutes
        limit.sample(500 * MS, 1, now);
        assertThat(limit.limit()).isEqualTo(100);
        assertThat(limit.baselineNanos()).isEqualTo(10 * MS);
        // the window it began closes with twenty more: its mean (33 ms) shrinks the limit in proportion, and the
        // baseline moves by a tenth of a second's share of a minute, not by ten minutes' worth
        assertThat(window(limit, 10, 80)).isEqualTo(60);
        assertThat(limit.baselineNanos()).isLessThan(11 * MS);
    }
}
