package io.cosched.spring.web.server;

import java.util.concurrent.RejectedExecutionException;
import org.springframework.http.HttpStatus;

/**
 * A coroutine request was shed: the in-flight limit was reached and no place was left in the queue, or it waited out
 * the queue timeout. Answered with {@link #status()}.
 */
final class CoroutineRejectedException extends RejectedExecutionException {

    private static final long serialVersionUID = 1L;

    private final HttpStatus status;

    CoroutineRejectedException(HttpStatus status, String message) {
        super(message, null);
        this.status = status;
    }

    /** 503, or 429 where so configured ({@code cosched.web.admission.status}). */
    HttpStatus status() {
        return status;
    }

    @Override
    public synchronized Throwable fillInStackTrace() {
        return this; // an expected outcome under load: no stack to walk
    }
}
