package io.cosched.spring.boot.autoconfigure.web;

import io.cosched.Arguments;
import io.cosched.spring.web.server.AdmissionControl;
import io.cosched.spring.web.stream.StreamLimits;
import java.time.Duration;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.http.HttpStatus;
import org.springframework.util.unit.DataSize;

/**
 * The {@code cosched.web.*} properties: blocking WebFlux handlers as coroutines. Every value is checked when it is
 * bound, so a bad one stops start-up with the property, its value and the rule.
 */
@ConfigurationProperties("cosched.web")
public class CoschedWebProperties {

    /** Which handlers run as coroutines: annotated (only @RunAsCoroutine), all (every blocking handler) or off. */
    private Mode mode = Mode.ANNOTATED;

    /** How long a coroutine handler may take before it is interrupted and the request answered with 503; none by default. */
    private @Nullable Duration requestTimeout;

    /**
     * The status of a request answered after request-timeout: 503, or 504 to tell it from a shed request (always 503,
     * answered before the handler ran), for a load balancer that retries 503s on another instance.
     */
    private int requestTimeoutStatus = 503;

    /**
     * How many coroutine requests may run at once; beyond it new ones are answered at once with 503 and Retry-After
     * (or wait in the admission queue). No limit by default. With admission.limit=adaptive, the adaptive limit's
     * ceiling (1000 when unset).
     */
    private @Nullable Integer maxInFlight;

    /**
     * A shed request's Retry-After is drawn at random from 1 s to this, in whole seconds, so that the clients one
     * burst shed do not all come back in the same second; 1s: always 1. From 1s to 1h.
     */
    private Duration retryAfterMax = Duration.ofSeconds(1);

    /** Whether a request whose client went away (Spring cancels it) interrupts its handler's coroutine; off lets handlers finish anyway. */
    private boolean cancelOnDisconnect = true;

    /**
     * Whether requests over max-in-flight on routes that surely run as coroutines are answered 503 by a handler in the
     * connection's pipeline (HTTP/1.1), before WebFlux's exchange, filters and handler lookup; off sheds them in WebFlux.
     */
    private boolean shedBeforeWebflux = true;

    /** The coschedShedding health contributor, for the readiness probe of instances behind a load balancer. */
    private final Readiness readiness = new Readiness();

    /**
     * Whether WebFlux's in-memory session store is cosched's, which makes a new session on the thread that asks
     * for it: Spring's hops to boundedElastic and then parallel for every new session, and Spring Security asks
     * for one on every request without a session cookie. Off keeps Spring Boot's store.
     */
    private boolean inlineSessions = true;

    /** Requests that read their body as a stream, or answer with one. */
    private final Stream stream = new Stream();

    /** How coroutine requests are admitted: the kind of in-flight limit, the queue over it, the status of a shed one. */
    private final Admission admission = new Admission();

    public Mode getMode() {
        return mode;
    }

    public void setMode(Mode mode) {
        this.mode = mode;
    }

    public @Nullable Duration getRequestTimeout() {
        return requestTimeout;
    }

    public void setRequestTimeout(@Nullable Duration requestTimeout) {
        this.requestTimeout = requestTimeout == null ? null : Arguments.positive("request-timeout", requestTimeout);
    }

    public int getRequestTimeoutStatus() {
        return requestTimeoutStatus;
    }

    public void setRequestTimeoutStatus(int requestTimeoutStatus) {
        if (requestTimeoutStatus != 503 && requestTimeoutStatus != 504) {
            throw new IllegalArgumentException(
                    "request-timeout-status: " + requestTimeoutStatus + " (must be 503 or 504)");
        }
        this.requestTimeoutStatus = requestTimeoutStatus;
    }

    public @Nullable Integer getMaxInFlight() {
        return maxInFlight;
    }

    public void setMaxInFlight(@Nullable Integer maxInFlight) {
        this.maxInFlight = maxInFlight == null ? null : Arguments.positive("max-in-flight", maxInFlight);
    }

    public Duration getRetryAfterMax() {
        return retryAfterMax;
    }

    public void setRetryAfterMax(Duration retryAfterMax) {
        if (retryAfterMax.compareTo(Duration.ofSeconds(1)) < 0 || retryAfterMax.compareTo(Duration.ofHours(1)) > 0) {
            throw new IllegalArgumentException("retry-after-max: " + retryAfterMax + " (expected: from 1s to 1h)");
        }
        this.retryAfterMax = retryAfterMax;
    }

    public boolean isCancelOnDisconnect() {
        return cancelOnDisconnect;
    }

    public void setCancelOnDisconnect(boolean cancelOnDisconnect) {
        this.cancelOnDisconnect = cancelOnDisconnect;
    }

    public Readiness getReadiness() {
        return readiness;
    }

    public boolean isShedBeforeWebflux() {
        return shedBeforeWebflux;
    }

    public void setShedBeforeWebflux(boolean shedBeforeWebflux) {
        this.shedBeforeWebflux = shedBeforeWebflux;
    }

    public boolean isInlineSessions() {
        return inlineSessions;
    }

    public void setInlineSessions(boolean inlineSessions) {
        this.inlineSessions = inlineSessions;
    }

    public Stream getStream() {
        return stream;
    }

    public Admission getAdmission() {
        return admission;
    }

    /** As the web module takes them. */
    public AdmissionControl admissionControl() {
        AdmissionControl control;
        if (admission.limit == AdmissionLimit.ADAPTIVE) {
            int ceiling = maxInFlight == null ? AdmissionControl.DEFAULT_ADAPTIVE_CEILING : maxInFlight;
            // min-limit and tolerance were checked when bound; only the two together are left
            if (ceiling < admission.minLimit) {
                throw new IllegalArgumentException("max-in-flight: " + ceiling
                        + " (expected: >= cosched.web.admission.min-limit, " + admission.minLimit
                        + ", with cosched.web.admission.limit=adaptive)");
            }
            control = AdmissionControl.adaptive(admission.minLimit, ceiling, admission.tolerance);
        } else {
            control = AdmissionControl.fixed(maxInFlight);
        }
        return control.withQueue(admission.queueSize, admission.queueTimeout)
                .withStatus(HttpStatus.valueOf(admission.status))
                .withRetryAfterMax(retryAfterMax);
    }

    /**
     * The time limits of a request once it streams: once its handler reads its body as a stream, or its streamed
     * response (StreamingResponseBody, EventStream) has begun, the request timeout no longer applies, these do.
     */
    public static class Stream {

        /** How long one read of a body stream may wait for the client's next bytes; past it the request is answered 408. 0 for no timeout. */
        private Duration readTimeout = Duration.ofSeconds(60);

        /**
         * How long one write of a streamed response may wait for the client to take more while its connection shows
         * no progress either; past it the stream is cut (the connection closes). None by default: socket buffers hide
         * a slowly reading client from one that stopped reading for minutes.
         */
        private @Nullable Duration writeTimeout;

        /** How long a request may stream in all, from the moment it begins to; past it its coroutine is interrupted. None by default. */
        private @Nullable Duration maxDuration;

        /**
         * How long a streamed response may take to its first byte once its handler has returned it, in place of
         * request-timeout (which otherwise covers that wait too); past it the request is answered 503. For producers
         * that wait for their first event, and many streams opened at once on a cold instance. None by default.
         */
        private @Nullable Duration firstByteTimeout;

        /**
         * The socket send buffer of a connection that answers with an EventStream (server-sent events, JSON lines):
         * a client that reads slowly parks its producer once this much (the kernel keeps twice it) and a few queued
         * events are unsent, rather than after the megabytes the kernel's autotuning grants each socket. 0 leaves the
         * kernel's. Byte streams (StreamingResponseBody) keep the kernel's.
         */
        // a literal, so that the configuration metadata shows the default; StreamLimits.DEFAULT_EVENT_SEND_BUFFER, as
        // CoschedWebPropertiesTest checks (the defaults bind to StreamLimits.DEFAULT)
        private DataSize eventSendBuffer = DataSize.ofKilobytes(32);

        /**
         * At shutdown, how long streamed responses other than server-sent events (JSON lines, downloads) may go on
         * before their connections are closed; server-sent-events streams are told at once and end cleanly. Runs
         * while the web server drains, so keep it below spring.lifecycle.timeout-per-shutdown-phase. 0 cuts them at
         * once.
         */
        private Duration shutdownGrace = Duration.ofSeconds(5);

        public Duration getReadTimeout() {
            return readTimeout;
        }

        public void setReadTimeout(Duration readTimeout) {
            this.readTimeout = Arguments.nonNegative("stream.read-timeout", readTimeout);
        }

        public @Nullable Duration getWriteTimeout() {
            return writeTimeout;
        }

        public void setWriteTimeout(@Nullable Duration writeTimeout) {
            this.writeTimeout = writeTimeout == null ? null : Arguments.positive("stream.write-timeout", writeTimeout);
        }

        public @Nullable Duration getMaxDuration() {
            return maxDuration;
        }

        public DataSize getEventSendBuffer() {
            return eventSendBuffer;
        }

        public void setEventSendBuffer(DataSize eventSendBuffer) {
            if (eventSendBuffer.isNegative() || eventSendBuffer.toBytes() > Integer.MAX_VALUE) {
                throw new IllegalArgumentException(
                        "stream.event-send-buffer: " + eventSendBuffer + " (expected: from 0, the kernel's, to 2GB)");
            }
            this.eventSendBuffer = eventSendBuffer;
        }

        public Duration getShutdownGrace() {
            return shutdownGrace;
        }

        public void setShutdownGrace(Duration shutdownGrace) {
            this.shutdownGrace = Arguments.nonNegative("stream.shutdown-grace", shutdownGrace);
        }

        public @Nullable Duration getFirstByteTimeout() {
            return firstByteTimeout;
        }

        public void setFirstByteTimeout(@Nullable Duration firstByteTimeout) {
            this.firstByteTimeout =
                    firstByteTimeout == null ? null : Arguments.positive("stream.first-byte-timeout", firstByteTimeout);
        }

        public void setMaxDuration(@Nullable Duration maxDuration) {
            this.maxDuration = maxDuration == null ? null : Arguments.positive("stream.max-duration", maxDuration);
        }

        /** As the web module takes them. */
        public StreamLimits limits() {
            return new StreamLimits(
                    readTimeout.isZero() ? null : readTimeout, writeTimeout, maxDuration, firstByteTimeout, (int)
                            eventSendBuffer.toBytes());
        }
    }

    /** The coschedShedding health contributor: out of service while the instance sheds, with hysteresis. */
    public static class Readiness {

        /** Whether the coschedShedding health contributor exists (add it to the readiness group). */
        private boolean enabled;

        /** Share of coroutine requests shed over a probe's window (at least 1 s) that takes the instance out of service. */
        private double refuseAt = 0.1;

        /** Share under which a window counts as calm; must not exceed refuse-at. */
        private double acceptBelow = 0.01;

        /** How long the calm must last before the instance is in service again (calm: shedding less than accept-below, with a free slot). */
        private Duration hold = Duration.ofSeconds(20);

        public boolean isEnabled() {
            return enabled;
        }

        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }

        public double getRefuseAt() {
            return refuseAt;
        }

        public void setRefuseAt(double refuseAt) {
            this.refuseAt = refuseAt;
        }

        public double getAcceptBelow() {
            return acceptBelow;
        }

        public void setAcceptBelow(double acceptBelow) {
            this.acceptBelow = acceptBelow;
        }

        public Duration getHold() {
            return hold;
        }

        public void setHold(Duration hold) {
            this.hold = hold;
        }
    }

    /** How coroutine requests are admitted ({@code cosched.web.admission.*}). */
    public static class Admission {

        /**
         * The kind of in-flight limit: fixed (max-in-flight, or none) or adaptive (follows the latency of the requests
         * it admits, between min-limit and max-in-flight, or 1000 when max-in-flight is unset).
         */
        private AdmissionLimit limit = AdmissionLimit.FIXED;

        /** The lowest an adaptive limit goes: at least what the backend serves at once (its connection pool's size). */
        private int minLimit = 10;

        /** How many times slower than its baseline the latency may get before an adaptive limit shrinks; > 1. */
        private double tolerance = 2.0;

        /** How many requests over the limit may wait for a slot; 0: none wait, they are shed at once. */
        private int queueSize;

        /** How long a request may wait in the queue before it is shed. */
        private Duration queueTimeout = Duration.ofMillis(100);

        /** The status of a shed request: 503 (Service Unavailable) or 429 (Too Many Requests); both with Retry-After. */
        private int status = 503;

        public AdmissionLimit getLimit() {
            return limit;
        }

        public void setLimit(AdmissionLimit limit) {
            this.limit = limit;
        }

        public int getMinLimit() {
            return minLimit;
        }

        public void setMinLimit(int minLimit) {
            this.minLimit = Arguments.positive("admission.min-limit", minLimit);
        }

        public double getTolerance() {
            return tolerance;
        }

        public void setTolerance(double tolerance) {
            if (!(tolerance > 1 && tolerance <= 100)) {
                throw new IllegalArgumentException("admission.tolerance: " + tolerance + " (expected: > 1 and <= 100)");
            }
            this.tolerance = tolerance;
        }

        public int getQueueSize() {
            return queueSize;
        }

        public void setQueueSize(int queueSize) {
            if (queueSize < 0) {
                throw new IllegalArgumentException("admission.queue-size: " + queueSize + " (expected: >= 0)");
            }
            this.queueSize = queueSize;
        }

        public Duration getQueueTimeout() {
            return queueTimeout;
        }

        public void setQueueTimeout(Duration queueTimeout) {
            this.queueTimeout = Arguments.positive("admission.queue-timeout", queueTimeout);
        }

        public int getStatus() {
            return status;
        }

        public void setStatus(int status) {
            if (status != 503 && status != 429) {
                throw new IllegalArgumentException("admission.status: " + status + " (must be 503 or 429)");
            }
            this.status = status;
        }
    }

    /** The kind of in-flight limit. */
    public enum AdmissionLimit {
        /** cosched.web.max-in-flight, or none when it is unset. */
        FIXED,
        /** Follows the latency of the requests it admits, between admission.min-limit and max-in-flight. */
        ADAPTIVE
    }

    /** Which WebFlux handlers run as coroutines. */
    public enum Mode {
        /** Only handlers annotated with {@code @RunAsCoroutine} (on the method or its class). */
        ANNOTATED,
        /** Every handler method whose return type is not reactive. */
        ALL,
        /** None: cosched leaves handler execution to Spring (the HTTP server still runs on cosched's loops). */
        OFF
    }
}
