package io.cosched.spring.web.server;

import java.util.concurrent.RejectedExecutionException;

/** A coroutine request arrived while {@code cosched.web.max-in-flight} were running; answered with 503. */
final class CoroutineRejectedException extends RejectedExecutionException {

    private static final long serialVersionUID = 1L;

    CoroutineRejectedException(int maxInFlight) {
        super("too many requests in flight (cosched.web.max-in-flight: " + maxInFlight + ")", null);
    }

    @Override
    public synchronized Throwable fillInStackTrace() {
        return this; // an expected outcome under load: no stack to walk
    }
}
