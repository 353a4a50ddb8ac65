package io.cosched.spring.boot.autoconfigure.web;

import java.util.concurrent.RejectedExecutionException;

/** Thrown by the executor when {@code cosched.web.max-in-flight} requests are running; answered with 503. */
final class CoroutineRejectedException extends RejectedExecutionException {

    private static final long serialVersionUID = 1L;

    CoroutineRejectedException(int maxInFlight) {
        super("cosched.web.max-in-flight: " + maxInFlight + " coroutine requests are running", null);
    }

    @Override
    public synchronized Throwable fillInStackTrace() {
        return this; // an expected outcome under load: no stack to walk
    }
}
