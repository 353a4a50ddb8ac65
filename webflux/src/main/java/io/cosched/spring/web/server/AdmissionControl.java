package io.cosched.spring.web.server;

import io.cosched.Arguments;
import java.time.Duration;
import org.jspecify.annotations.Nullable;
import org.springframework.http.HttpStatus;

/**
 * How coroutine requests are admitted: the in-flight limit (a fixed number, none, or one that follows the latency of
 * what it admits), the queue a request over it may wait in, and how a request that is shed is answered. Immutable;
 * each {@code with} method returns a copy.
 *
 * <pre>{@code
 * AdmissionControl.adaptive(10, 500, 2.0).withQueue(50, Duration.ofMillis(100)).withStatus(HttpStatus.TOO_MANY_REQUESTS)
 * }</pre>
 */
public final class AdmissionControl {

    /** The ceiling of an adaptive limit when no max-in-flight is given. */
    public static final int DEFAULT_ADAPTIVE_CEILING = 1000;

    private final int limit; // the fixed limit, or the adaptive one's ceiling
    private final int floor; // 0: fixed
    private final double tolerance;
    private final int queueSize;
    private final Duration queueTimeout;
    private final HttpStatus status;
    private final Duration retryAfterMax;

    private AdmissionControl(
            int limit,
            int floor,
            double tolerance,
            int queueSize,
            Duration queueTimeout,
            HttpStatus status,
            Duration retryAfterMax) {
        this.limit = limit;
        this.floor = floor;
        this.tolerance = tolerance;
        this.queueSize = queueSize;
        this.queueTimeout = queueTimeout;
        this.status = status;
        this.retryAfterMax = retryAfterMax;
    }

    /** At most {@code maxInFlight} coroutine requests at once (> 0); null for none. No queue, 503, Retry-After 1. */
    public static AdmissionControl fixed(@Nullable Integer maxInFlight) {
        int max = maxInFlight == null ? Integer.MAX_VALUE : Arguments.positive("maxInFlight", maxInFlight);
        return new AdmissionControl(
                max, 0, 0, 0, Duration.ofMillis(100), HttpStatus.SERVICE_UNAVAILABLE, Duration.ofSeconds(1));
    }

    /**
     * A limit that follows the latency of the requests it admits (see the architecture docs): it starts at
     * {@code maxLimit}, shrinks down to {@code minLimit} while the latency is more than {@code tolerance} times its
     * baseline, and grows back while it is not.
     */
    public static AdmissionControl adaptive(int minLimit, int maxLimit, double tolerance) {
        if (minLimit <= 0) {
            throw new IllegalArgumentException("min-limit: " + minLimit + " (expected: > 0)");
        }
        if (maxLimit < minLimit) {
            throw new IllegalArgumentException(
                    "max-limit: " + maxLimit + " (expected: >= the min-limit, " + minLimit + ")");
        }
        if (!(tolerance > 1 && tolerance <= 100)) {
            throw new IllegalArgumentException("tolerance: " + tolerance + " (expected: > 1 and <= 100)");
        }
        return new AdmissionControl(
                maxLimit,
                minLimit,
                tolerance,
                0,
                Duration.ofMillis(100),
                HttpStatus.SERVICE_UNAVAILABLE,
                Duration.ofSeconds(1));
    }

    /**
     * Requests over the limit wait for a slot, up to {@code size} of them (>= 0; 0: none wait) and each for at most
     * {@code timeout} (> 0), in arrival order; the rest are shed at once.
     */
    public AdmissionControl withQueue(int size, Duration timeout) {
        if (size < 0) {
            throw new IllegalArgumentException("queue-size: " + size + " (expected: >= 0)");
        }
        return new AdmissionControl(
                limit, floor, tolerance, size, Arguments.positive("queue-timeout", timeout), status, retryAfterMax);
    }

    /** The status a shed request is answered with: 503 Service Unavailable or 429 Too Many Requests. */
    public AdmissionControl withStatus(HttpStatus status) {
        if (status != HttpStatus.SERVICE_UNAVAILABLE && status != HttpStatus.TOO_MANY_REQUESTS) {
            throw new IllegalArgumentException("status: " + status.value() + " (expected: 503 or 429)");
        }
        return new AdmissionControl(limit, floor, tolerance, queueSize, queueTimeout, status, retryAfterMax);
    }

    /**
     * A shed request's {@code Retry-After} is drawn at random from 1 s to {@code max}, in whole seconds (1 s: always
     * 1); from 1 s to 1 h.
     */
    public AdmissionControl withRetryAfterMax(Duration max) {
        if (max.compareTo(Duration.ofSeconds(1)) < 0 || max.compareTo(Duration.ofHours(1)) > 0) {
            throw new IllegalArgumentException("retryAfterMax: " + max + " (expected: from 1 s to 1 h)");
        }
        return new AdmissionControl(limit, floor, tolerance, queueSize, queueTimeout, status, max);
    }

    boolean adaptive() {
        return floor > 0;
    }

    int limit() {
        return limit;
    }

    int floor() {
        return floor;
    }

    double tolerance() {
        return tolerance;
    }

    int queueSize() {
        return queueSize;
    }

    Duration queueTimeout() {
        return queueTimeout;
    }

    HttpStatus status() {
        return status;
    }

    int retryAfterMaxSeconds() {
        return (int) retryAfterMax.toSeconds();
    }

    @Override
    public String toString() {
        String l = adaptive()
                ? "adaptive " + floor + ".." + limit + " (tolerance " + tolerance + ")"
                : limit == Integer.MAX_VALUE ? "none" : Integer.toString(limit);
        return "AdmissionControl[limit=" + l + ", queue=" + queueSize + " for " + queueTimeout + ", status="
                + status.value() + ", retryAfterMax=" + retryAfterMax + "]";
    }
}
