package io.cosched.spring.web;

/**
 * What cosched's web integration did: requests in flight as coroutines, timed out, shed, cancelled. Thread-safe
 * and read-only: the numbers are counted where the requests are admitted and handled, and nothing that reads
 * them (the actuator endpoint, the meters, readiness, your code) can change them.
 */
public interface CoschedWebStats {

    /** Requests being handled by coroutines now. */
    int inFlight();

    /** Requests answered with 503 because they exceeded {@code cosched.web.request-timeout}. */
    long timedOut();

    /**
     * How many requests may be handled by coroutines at once now: {@code cosched.web.max-in-flight}, the adaptive
     * limit's value now ({@code cosched.web.admission.limit=adaptive}), or {@link Integer#MAX_VALUE} for none.
     */
    int limit();

    /** Requests over the limit waiting for a slot now ({@code cosched.web.admission.queue-size}). */
    int queued();

    /**
     * Requests shed (answered 503, or 429 where so configured, with {@code Retry-After}): the limit was reached and no
     * place was free in the queue, or they waited out {@code cosched.web.admission.queue-timeout}.
     */
    long shed();

    /** Of the {@link #shed()} requests, those that waited in the queue until its timeout. */
    long queueTimedOut();

    /**
     * Of the {@link #shed()} requests, those answered before WebFlux saw them, by a handler in the
     * connection's pipeline (HTTP/1.1, on routes that surely run as coroutines).
     */
    long shedEarly();

    /**
     * Requests Spring cancelled before their handler finished: the client went away, or a filter gave
     * up on them. Their coroutines are interrupted unless {@code cosched.web.cancel-on-disconnect=false}.
     */
    long cancelled();

    /** Coroutines started for handlers. */
    long coroutinesStarted();

    /** Hand-offs Spring asked for that ran inline, because the caller already was the request's coroutine. */
    long inlined();

    /**
     * Coroutine requests that reached cosched on another thread than their connection's event loop (a
     * filter finished on another scheduler, as Spring Security's password check does by default) and
     * were started on that loop all the same: each cost a hand-off to the loop.
     */
    long offLoop();
}
