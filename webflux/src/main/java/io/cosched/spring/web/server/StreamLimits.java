package io.cosched.spring.web.server;

import io.cosched.Arguments;
import java.time.Duration;
import org.jspecify.annotations.Nullable;

/**
 * The limits of a request once it streams (reads its body as a stream, or has sent the first bytes of a streamed
 * response), where the request timeout no longer applies.
 *
 * @param readTimeout  how long one read may wait for the client's next bytes; null for no limit
 * @param writeTimeout how long one write may wait for the client to take more, while the connection shows no
 *                     progress either; null for no limit
 * @param maxDuration  how long a request may stream in all, from the moment it begins to; null for no limit
 */
public record StreamLimits(
        @Nullable Duration readTimeout,
        @Nullable Duration writeTimeout,
        @Nullable Duration maxDuration) {

    /**
     * What {@code cosched.web.stream.*} defaults to: a minute of silence ends a body being read; no limit on writes
     * (the socket's buffers hide a slow reader from a stalled one for minutes: docs/web.md) or in all.
     */
    public static final StreamLimits DEFAULT = new StreamLimits(Duration.ofSeconds(60), null, null);

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
    }

    long readNanos() {
        return readTimeout == null ? 0 : readTimeout.toNanos();
    }

    long writeNanos() {
        return writeTimeout == null ? 0 : writeTimeout.toNanos();
    }
}
