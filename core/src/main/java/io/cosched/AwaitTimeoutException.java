package io.cosched;

import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeoutException;

/**
 * Thrown by {@link Coroutines#await(java.util.concurrent.CompletionStage, java.time.Duration)} when
 * the stage did not complete in time. Its cause is a {@link TimeoutException}. The stage itself is
 * left alone: await cancels nothing it does not own.
 */
public final class AwaitTimeoutException extends CompletionException {

    private static final long serialVersionUID = 1L;

    public AwaitTimeoutException(TimeoutException cause) {
        super(cause.getMessage(), cause);
    }
}
