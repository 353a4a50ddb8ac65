package io.cosched.spring.web;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

/** What cosched's web integration did: requests in flight as coroutines, timed out, shed, cancelled. Thread-safe. */
public final class CoschedWebStats {

    private final AtomicInteger inFlight = new AtomicInteger();
    private final LongAdder timedOut = new LongAdder();
    private final LongAdder shed = new LongAdder();
    private final LongAdder shedEarly = new LongAdder();
    private final LongAdder cancelled = new LongAdder();
    private final LongAdder coroutines = new LongAdder();
    private final LongAdder inlined = new LongAdder();
    private final LongAdder offLoop = new LongAdder();

    /** Requests being handled by coroutines now. */
    public int inFlight() {
        return inFlight.get();
    }

    /** Requests answered with 503 because they exceeded {@code cosched.web.request-timeout}. */
    public long timedOut() {
        return timedOut.sum();
    }

    /** Requests answered with 503 because {@code cosched.web.max-in-flight} were already running. */
    public long shed() {
        return shed.sum();
    }

    /**
     * Of the {@link #shed()} requests, those answered before WebFlux saw them, by a handler in the
     * connection's pipeline (HTTP/1.1, on routes that surely run as coroutines).
     */
    public long shedEarly() {
        return shedEarly.sum();
    }

    /**
     * Requests Spring cancelled before their handler finished: the client went away, or a filter gave
     * up on them. Their coroutines are interrupted unless {@code cosched.web.cancel-on-disconnect=false}.
     */
    public long cancelled() {
        return cancelled.sum();
    }

    /** Coroutines started for handlers. */
    public long coroutinesStarted() {
        return coroutines.sum();
    }

    /** Hand-offs Spring asked for that ran inline, because the caller already was the request's coroutine. */
    public long inlined() {
        return inlined.sum();
    }

    /**
     * Coroutine requests that reached cosched on another thread than their connection's event loop (a
     * filter finished on another scheduler, as Spring Security's password check does by default) and
     * were started on that loop all the same: each cost a hand-off to the loop.
     */
    public long offLoop() {
        return offLoop.sum();
    }

    /** Takes an in-flight slot unless {@code limit} are taken; held until the request's coroutine has returned. */
    public boolean tryEnter(int limit) {
        for (;;) {
            int n = inFlight.get();
            if (n >= limit) {
                return false;
            }
            if (inFlight.compareAndSet(n, n + 1)) {
                return true;
            }
        }
    }

    public void exit() {
        inFlight.decrementAndGet();
    }

    public void countTimedOut() {
        timedOut.increment();
    }

    public void countShed() {
        shed.increment();
    }

    public void countShedEarly() {
        shedEarly.increment();
    }

    public void countCancelled() {
        cancelled.increment();
    }

    public void countCoroutine() {
        coroutines.increment();
    }

    public void countInlined() {
        inlined.increment();
    }

    public void countOffLoop() {
        offLoop.increment();
    }

    @Override
    public String toString() {
        return "CoschedWebStats[inFlight=" + inFlight() + ", timedOut=" + timedOut() + ", shed=" + shed() + ", shedEarly=" + shedEarly()
                + ", cancelled=" + cancelled() + ", coroutinesStarted=" + coroutinesStarted() + ", inlined=" + inlined()
                + ", offLoop=" + offLoop() + "]";
    }
}
