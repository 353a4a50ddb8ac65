package io.cosched.spring.web;

import java.io.IOException;

/**
 * A streamed request body or response cannot go on; {@link #reason()} says why. Thrown by reads of a request body
 * stream ({@code InputStream} and {@link MultipartStream} arguments) and by writes of a streamed response
 * ({@link StreamingResponseBody}, {@link EventStream}). Letting it propagate out of the handler is the usual way
 * to stop: cosched then answers what can still be answered (408 for a client too slow to send its body, 503 past
 * the stream's time limit) and otherwise closes the connection; a server-sent-events stream that ends because the
 * server shuts down ends cleanly, as if it had returned.
 */
public final class StreamClosedException extends IOException {

    private static final long serialVersionUID = 1L;

    /** Why a stream ended early. */
    public enum Reason {
        /** The client closed the connection, or something upstream (a filter's timeout) gave up on the request. */
        CLIENT_GONE,
        /** {@code cosched.web.request-timeout} passed before the stream began. */
        REQUEST_TIMEOUT,
        /** The client sent nothing for {@code cosched.web.stream.read-timeout}, or took nothing for {@code write-timeout}. */
        IDLE_TIMEOUT,
        /** The request ran past {@code cosched.web.stream.max-duration}. */
        MAX_DURATION,
        /**
         * The server is shutting down: a server-sent-events stream is told at once and ends cleanly (its client
         * reconnects, elsewhere); any other streamed response still running after
         * {@code cosched.web.stream.shutdown-grace} is cut.
         */
        SHUTDOWN
    }

    private final Reason reason;

    public StreamClosedException(Reason reason, String message) {
        super(message);
        this.reason = reason;
    }

    public Reason reason() {
        return reason;
    }
}
