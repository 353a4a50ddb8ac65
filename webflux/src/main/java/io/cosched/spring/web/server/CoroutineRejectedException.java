package io.cosched.spring.web.server;

import java.util.concurrent.RejectedExecutionException;

/**
 * A coroutine request was shed: the in-flight limit was reached and no place was left in the queue, or it waited out
 * the queue timeout. Answered with the admission's status (503, or 429: {@code cosched.web.admission.status}).
 */
final class CoroutineRejectedException extends RejectedExecutionException {

    private static final long serialVersionUID = 1L;

    CoroutineRejectedException(String message) {
        super(message, null);
    }

    @Override
    public synchronized Throwable fillInStackTrace() {
        return this; // an expected outcome under load: no stack to walk
    }
}
