package io.cosched.spring.web.stream;

import io.cosched.Arguments;
import java.time.Duration;
import org.jspecify.annotations.Nullable;

/**
 * The limits of a request once it streams (reads its body as a stream, or has sent the first bytes of a streamed
 * response), where the request timeout no longer applies, and the socket send buffer of an event stream.
 *
 * @param readTimeout  how long one read may wait for the client's next bytes; null for none
 * @param writeTimeout how long one write may wait for the client to take more, while the connection shows no
 *                     progress either; null for none
 * @param maxDuration  how long a request may stream in all, from the moment it begins to; null for none
 * @param firstByteTimeout how long a streamed response may take to its first byte once its handler has returned it,
 *                     in place of the request timeout; null: the request timeout covers that wait too
 * @param eventSendBuffer the socket send buffer (SO_SNDBUF, bytes) of a connection that answers with an
 *                     {@code EventStream}, so that a client that reads slowly parks its producer after a few dozen KB
 *                     rather than after the megabytes the kernel's autotuning grants; 0: the kernel's
 */
public record StreamLimits(
        @Nullable Duration readTimeout,
        @Nullable Duration writeTimeout,
        @Nullable Duration maxDuration,
        @Nullable Duration firstByteTimeout,
        int eventSendBuffer) {

    /** What {@code cosched.web.stream.event-send-buffer} defaults to: 32 KiB (the kernel keeps twice that). */
    public static final int DEFAULT_EVENT_SEND_BUFFER = 32 * 1024;

    /**
     * What {@code cosched.web.stream.*} defaults to: a minute of silence ends a body being read; no limit on writes
     * (the socket's buffers hide a slow reader from a stalled one for minutes: docs/web.md) or in all; the request
     * timeout up to a response's first byte; event streams' send buffer bounded.
     */
    public static final StreamLimits DEFAULT =
            new StreamLimits(Duration.ofSeconds(60), null, null, null, DEFAULT_EVENT_SEND_BUFFER);

    /**
     * Without a first-byte limit of their own (the request timeout covers the wait for a response's first byte), and
     * the default event stream send buffer.
     */
    public StreamLimits(
            @Nullable Duration readTimeout, @Nullable Duration writeTimeout, @Nullable Duration maxDuration) {
        this(readTimeout, writeTimeout, maxDuration, null, DEFAULT_EVENT_SEND_BUFFER);
    }

    public StreamLimits {
        if (readTimeout != null) {
            Arguments.positive("readTimeout", readTimeout);
        }
        if (writeTimeout != null) {
            Arguments.positive("writeTimeout", writeTimeout);
        }
        if (maxDuration != null) {
            Arguments.positive("maxDuration", maxDuration);
        }
        if (firstByteTimeout != null) {
            Arguments.positive("firstByteTimeout", firstByteTimeout);
        }
        if (eventSendBuffer < 0) {
            throw new IllegalArgumentException("eventSendBuffer: " + eventSendBuffer + " (expected: >= 0)");
        }
    }

    long readNanos() {
        return readTimeout == null ? 0 : readTimeout.toNanos();
    }

    long writeNanos() {
        return writeTimeout == null ? 0 : writeTimeout.toNanos();
    }
}
