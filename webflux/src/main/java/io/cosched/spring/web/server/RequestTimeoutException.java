package io.cosched.spring.web.server;

import java.time.Duration;

/** A coroutine request ran past {@code cosched.web.request-timeout}; answered with 503. */
final class RequestTimeoutException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    RequestTimeoutException(Duration timeout) {
        // an expected outcome under load: no stack to walk
        super("request timed out after " + timeout + " (cosched.web.request-timeout)", null, false, false);
    }
}
