package io.cosched.spring.web.server;

import io.cosched.Arguments;
import org.jspecify.annotations.Nullable;

import java.time.Duration;

/**
 * The limits of a request once it streams (reads its body as a stream, or has sent the first bytes of a streamed
 * response), where the request timeout no longer applies.
 *
 * @param idleTimeout how long one read may wait for the client's next bytes, or one write for the client to take
 *                    more; null for no limit
 * @param maxDuration how long a request may stream in all, from the moment it begins to; null for no limit
 */
public record StreamLimits(@Nullable Duration idleTimeout, @Nullable Duration maxDuration) {

    /** What {@code cosched.web.stream.*} defaults to: a minute of silence ends a stream, no limit in all. */
    public static final StreamLimits DEFAULT = new StreamLimits(Duration.ofSeconds(60), null);

    public StreamLimits {
        if (idleTimeout != null) {
            Arguments.positive("idleTimeout", idleTimeout);
        }
        if (maxDuration != null) {
            Arguments.positive("maxDuration", maxDuration);
        }
    }
}
