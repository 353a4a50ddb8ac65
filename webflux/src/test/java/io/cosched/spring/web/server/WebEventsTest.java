package io.cosched.spring.web.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The rate limit of the web events: a second's events over the limit are left out and counted into the next one. */
@Timeout(30)
class WebEventsTest {

    private final AtomicLong now = new AtomicLong(5_000_000_000L);
    private final WebEvents.Rate rate = new WebEvents.Rate(3, now::get);

    @Test
    void theEventsOverASecondsLimitAreLeftOutAndCountedIntoTheNextOneRecorded() {
        assertThat(rate.admit()).isZero();
        assertThat(rate.admit()).isZero();
        assertThat(rate.admit()).isZero();
        assertThat(rate.admit()).isNegative(); // the fourth in this second
        now.addAndGet(999_999_999L);
        assertThat(rate.admit()).isNegative(); // still the same second
        assertThat(rate.admit()).isNegative();
        now.addAndGet(1);
        assertThat(rate.admit()).isEqualTo(3); // a new second: the three left out are in this one
        assertThat(rate.admit()).isZero();
    }

    @Test
    void aSecondStartsWithTheFirstEventAfterAQuietTime() {
        assertThat(rate.admit()).isZero();
        now.addAndGet(60_000_000_000L);
        for (int i = 0; i < 3; i++) {
            assertThat(rate.admit()).isZero();
        }
        now.addAndGet(500_000_000L); // half a second into the window the first of these opened
        assertThat(rate.admit()).isNegative();
    }
}
