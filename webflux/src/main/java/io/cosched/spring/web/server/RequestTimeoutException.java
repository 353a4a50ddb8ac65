package io.cosched.spring.web.server;

import java.time.Duration;

/** A coroutine request ran past {@code cosched.web.request-timeout} (or a streaming one past its max-duration); answered with 503. */
final class RequestTimeoutException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    RequestTimeoutException(Duration timeout) {
        this("request timed out after " + timeout + " (cosched.web.request-timeout)");
    }

    private RequestTimeoutException(String message) {
        // an expected outcome under load: no stack to walk
        super(message, null, false, false);
    }

    /** A streamed response did not begin within {@code cosched.web.stream.first-byte-timeout}. */
    static RequestTimeoutException noFirstByte(Duration limit) {
        return new RequestTimeoutException(
                "streamed response sent nothing within " + limit + " (cosched.web.stream.first-byte-timeout)");
    }

    /** A streaming request ran past {@code cosched.web.stream.max-duration} before its response began. */
    static RequestTimeoutException streamedTooLong(Duration limit) {
        return new RequestTimeoutException(
                "request streamed for longer than " + limit + " (cosched.web.stream.max-duration)");
    }
}
