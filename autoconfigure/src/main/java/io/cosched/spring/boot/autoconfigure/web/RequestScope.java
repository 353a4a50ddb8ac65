package io.cosched.spring.boot.autoconfigure.web;

import io.cosched.Coroutine;
import io.cosched.Timer;
import io.cosched.TimerManager;
import io.cosched.spring.web.CoschedWebStats;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

import java.time.Duration;

/**
 * One request as cosched sees it: whether it holds an in-flight slot, its timeout timer, and the
 * coroutine running its handler now (the first hand-off's coroutine, or the second one's after a
 * request body was read). Created by {@link CoschedWebFilter}, found by the executor through the
 * request's Reactor context.
 */
final class RequestScope {

    static final String KEY = "io.cosched.request";

    private final CoschedWebStats stats;
    private final Sinks.@Nullable Empty<Void> timedOut; // only with a request timeout: most requests need none

    // guarded by this
    private boolean admitted;
    private boolean finished;
    private boolean expired;
    private @Nullable Timer timer;
    private @Nullable Coroutine<?> current;

    RequestScope(CoschedWebStats stats, boolean timed) {
        this.stats = stats;
        this.timedOut = timed ? Sinks.empty() : null;
    }

    /**
     * Admits the request when its first coroutine starts: takes an in-flight slot and arms the
     * timeout. Later hand-offs of an admitted (or already finished) request pass.
     *
     * @return false when {@code maxInFlight} requests are running: the request is to be shed
     */
    synchronized boolean admit(int maxInFlight, @Nullable Duration timeout, TimerManager timers) {
        if (admitted || finished) {
            return true;
        }
        if (!stats.tryEnter(maxInFlight)) {
            return false;
        }
        admitted = true;
        if (timeout != null) {
            timer = timers.addTimer(timeout, this::expire);
        }
        return true;
    }

    /** The calling coroutine now runs the handler; a request that already timed out cancels it at once. */
    void attach(Coroutine<?> coroutine) {
        boolean cancel;
        synchronized (this) {
            current = coroutine;
            cancel = expired;
        }
        if (cancel) {
            coroutine.cancel();
        }
    }

    synchronized void detach(Coroutine<?> coroutine) {
        if (current == coroutine) {
            current = null;
        }
    }

    /** The timeout timer fired: interrupt the handler's coroutine and tell the filter to answer. */
    private void expire() {
        Coroutine<?> running;
        synchronized (this) {
            if (finished) {
                return;
            }
            expired = true;
            running = current;
        }
        stats.countTimedOut();
        if (running != null) {
            running.cancel();
        }
        if (timedOut != null) {
            timedOut.tryEmitEmpty();
        }
    }

    /** Completes when the request times out; never without a timeout. */
    Mono<Void> onTimeout() {
        return timedOut == null ? Mono.never() : timedOut.asMono();
    }

    /** The request is over (answered, failed or cancelled): free the slot and the timer. */
    void finish() {
        Timer t;
        boolean release;
        synchronized (this) {
            if (finished) {
                return;
            }
            finished = true;
            t = timer;
            release = admitted;
        }
        if (t != null) {
            t.cancel();
        }
        if (release) {
            stats.exit();
        }
    }
}
