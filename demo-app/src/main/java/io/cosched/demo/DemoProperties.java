package io.cosched.demo;

import java.time.Duration;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.ConfigurationProperties;

/** The demo's {@code demo.*} settings; each value is checked when it is bound. */
@ConfigurationProperties("demo")
public class DemoProperties {

    private final Downstream downstream = new Downstream();
    private final Quote quote = new Quote();
    private final Expiry expiry = new Expiry();

    public Downstream getDownstream() {
        return downstream;
    }

    public Quote getQuote() {
        return quote;
    }

    public Expiry getExpiry() {
        return expiry;
    }

    /** The pricing service the quote endpoints call; by default the stub inside this app. */
    public static class Downstream {

        /** Base URL of the pricing service; unset means this app's own /downstream stub. */
        private @Nullable String baseUrl;

        /** How long the built-in stub takes to answer. */
        private Duration delay = Duration.ofMillis(20);

        /** Share of the stub's answers that fail with 503, between 0 and 1. */
        private double failureRate;

        public @Nullable String getBaseUrl() {
            return baseUrl;
        }

        public void setBaseUrl(@Nullable String baseUrl) {
            this.baseUrl = baseUrl;
        }

        public Duration getDelay() {
            return delay;
        }

        public void setDelay(Duration delay) {
            this.delay = Checks.notNegative("delay", delay);
        }

        public double getFailureRate() {
            return failureRate;
        }

        public void setFailureRate(double failureRate) {
            this.failureRate = Checks.rate("failure-rate", failureRate);
        }
    }

    /** How the quote endpoints call the pricing service. */
    public static class Quote {

        /** Time allowed for one call to the pricing service. */
        private Duration timeout = Duration.ofMillis(500);

        /** Calls per quote, the first one included. */
        private int attempts = 3;

        /** Wait before the first retry; doubled before each further one. */
        private Duration backoff = Duration.ofMillis(50);

        public Duration getTimeout() {
            return timeout;
        }

        public void setTimeout(Duration timeout) {
            this.timeout = Checks.positive("timeout", timeout);
        }

        public int getAttempts() {
            return attempts;
        }

        public void setAttempts(int attempts) {
            if (attempts < 1) {
                throw new IllegalArgumentException("attempts: " + attempts + " (expected: >= 1)");
            }
            this.attempts = attempts;
        }

        public Duration getBackoff() {
            return backoff;
        }

        public void setBackoff(Duration backoff) {
            this.backoff = Checks.notNegative("backoff", backoff);
        }
    }

    /** The background job that expires stale pending orders, on the IOManager's timers. */
    public static class Expiry {

        /** How often the job runs. */
        private Duration period = Duration.ofSeconds(10);

        /** Pending orders older than this are expired. */
        private Duration maxAge = Duration.ofMinutes(5);

        public Duration getPeriod() {
            return period;
        }

        public void setPeriod(Duration period) {
            this.period = Checks.positive("period", period);
        }

        public Duration getMaxAge() {
            return maxAge;
        }

        public void setMaxAge(Duration maxAge) {
            this.maxAge = Checks.positive("max-age", maxAge);
        }
    }
}
