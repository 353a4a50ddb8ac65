package io.cosched.spring.web.stream;

import io.cosched.TimerManager;
import io.cosched.spring.web.StreamClosedException;
import io.cosched.spring.web.StreamClosedException.Reason;
import java.io.IOException;
import java.io.InterruptedIOException;
import org.jspecify.annotations.Nullable;
import org.springframework.http.server.reactive.ServerHttpResponse;
import reactor.core.publisher.Mono;

/**
 * What a streamed request body or response needs from its request: when the stream begins (the request timeout
 * stops applying), how long a read or write may wait for the client, why the request is ending early, and what
 * to do when the client leaves mid-stream. A coroutine request's is its {@link RequestStreams}; a handler that
 * does not run as one gets {@link #detached}.
 */
interface StreamRequest {

    /**
     * The request starts to stream: its request timeout no longer applies, its stream's time limits do. Called by the
     * streaming thread before the first read that waits for the client, and before the response's first signal.
     *
     * @return false when the request timed out first: the stream must not begin
     */
    boolean beginStream();

    /** Why the request is ending early (the client left, a time limit passed), or null while it is not. */
    @Nullable
    Reason endedBy();

    /** The stream's time limits that apply to reads and writes: how long each may wait for the client. */
    StreamLimits limits();

    /** The timers that watch the read and write timeouts (the request's loop's); null: each wait is a timed park. */
    @Nullable
    TimerManager timers();

    /** The response stream lost its subscriber: the client went away, or the write failed. */
    void streamCancelled();

    /**
     * The server shuts down and the response stream is to end: the request ends early with {@link Reason#SHUTDOWN}
     * unless it is ending already, and its thread, when it is the request's coroutine, is interrupted.
     */
    void shuttingDown();

    /**
     * Closes {@code reader} when the request's code has returned, so that buffers it holds, or still gets, of a
     * body the handler did not read to its end are released. Called by the reading thread.
     */
    void closeAtEnd(PullSubscriber<?> reader);

    /** The exception for a read or write that found the stream ended, or whose thread was interrupted. */
    default IOException closed(String what) {
        Reason reason = endedBy();
        if (reason == null) {
            Thread.currentThread().interrupt(); // an interrupt of its own (the IOManager stopping): kept for the caller
            return new InterruptedIOException(what + " interrupted");
        }
        return new StreamClosedException(reason, what + ": " + message(reason));
    }

    static String message(Reason reason) {
        return switch (reason) {
            case CLIENT_GONE -> "the client went away";
            case REQUEST_TIMEOUT -> "the request timed out before its stream began (cosched.web.request-timeout)";
            case IDLE_TIMEOUT ->
                "the client sent or took nothing for longer than its limit (cosched.web.stream.read-timeout, write-timeout)";
            case MAX_DURATION -> "the request ran past cosched.web.stream.max-duration";
            case SHUTDOWN -> "the server is shutting down (cosched.web.stream.shutdown-grace)";
        };
    }

    /**
     * For a handler that does not run as a coroutine request (Spring's own blocking execution, a thread of the
     * application's): no request timeout or time limit, the read and write limits of {@code limits}. A client that leaves fails the next
     * write; the thread is not interrupted, as it may be a pooled one that goes on to other work. A body stream
     * ends when the response begins.
     */
    static StreamRequest detached(StreamLimits limits, ServerHttpResponse response) {
        return new StreamRequest() {
            private volatile @Nullable Reason ended;

            @Override
            public boolean beginStream() {
                return true;
            }

            @Override
            public @Nullable Reason endedBy() {
                return ended;
            }

            @Override
            public StreamLimits limits() {
                return limits;
            }

            @Override
            public @Nullable TimerManager timers() {
                return null;
            }

            @Override
            public void streamCancelled() {
                if (ended == null) {
                    ended = Reason.CLIENT_GONE;
                }
            }

            @Override
            public void shuttingDown() {
                if (ended == null) {
                    ended = Reason.SHUTDOWN;
                }
            }

            /** Without a coroutine request, the end that can be seen is the response's start. */
            @Override
            public void closeAtEnd(PullSubscriber<?> reader) {
                response.beforeCommit(() -> {
                    reader.close();
                    return Mono.empty();
                });
            }
        };
    }
}
