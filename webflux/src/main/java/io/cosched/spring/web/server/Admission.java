package io.cosched.spring.web.server;

import io.cosched.IOManager;
import io.cosched.Internal;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.springframework.web.server.ServerWebExchange;

/**
 * The in-flight limit of coroutine requests, for every way a handler becomes a coroutine (a
 * request's own coroutine, a hand-off of Spring's blocking execution): a slot is taken before the
 * coroutine starts and given back when its code has returned, or at once when it could not start;
 * what was shed and what started is counted. The slots are its own: the stats read how many are taken.
 */
@Internal
public final class Admission {

    private final IOManager io;
    private final AtomicInteger inFlight = new AtomicInteger();
    private final RequestCounters counts = new RequestCounters(inFlight::get);
    private final int limit;
    private final int retryAfterMaxSeconds;

    Admission(IOManager io, int limit, int retryAfterMaxSeconds) {
        this.io = io;
        this.limit = limit;
        this.retryAfterMaxSeconds = retryAfterMaxSeconds;
    }

    /** The longest {@link #retryAfterSeconds()} draws. */
    public int retryAfterMaxSeconds() {
        return retryAfterMaxSeconds;
    }

    /**
     * The {@code Retry-After} of a shed request, in seconds: drawn at random from 1 to {@link #retryAfterMaxSeconds()},
     * so that the clients one burst shed do not all come back in the same second.
     */
    public int retryAfterSeconds() {
        return retryAfterMaxSeconds == 1 ? 1 : 1 + ThreadLocalRandom.current().nextInt(retryAfterMaxSeconds);
    }

    /** The counts of the requests it admits, and of what became of them. */
    RequestCounters counts() {
        return counts;
    }

    /**
     * Takes a slot; false, counted and recorded as shed, when {@code limit} coroutine requests hold one
     * already. {@code exchange}: the request, null for a hand-off of Spring's blocking execution.
     */
    boolean enter(@Nullable ServerWebExchange exchange) {
        for (; ; ) {
            int n = inFlight.get();
            if (n >= limit) {
                break;
            }
            if (inFlight.compareAndSet(n, n + 1)) {
                return true;
            }
        }
        counts.countShed();
        WebEvents.shed(exchange, limit);
        return false;
    }

    /** Whether {@code limit} coroutine requests hold a slot now (a look, not a reservation). */
    public boolean full() {
        return inFlight.get() >= limit;
    }

    /** Counts and records a request shed before WebFlux saw it ({@code EarlyShedding}), as its request line says. */
    public void shedEarly(String method, String uri) {
        counts.countShed();
        counts.countShedEarly();
        WebEvents.shedEarly(method, uri, limit);
    }

    /** What a shed request fails with (answered 503). */
    CoroutineRejectedException rejection() {
        return new CoroutineRejectedException(limit);
    }

    /** The body of the 503 a shed request is answered with: RFC 9457 problem details, as WebFlux's answer is. */
    public String rejectionProblem() {
        return UnavailableResponses.problem(rejection().getMessage());
    }

    /**
     * Starts the coroutine of an admitted request with {@code spawn}, and counts it; when it cannot
     * start (the IOManager is stopping), gives the slot back and rethrows.
     */
    <C> C start(Supplier<C> spawn) {
        C started;
        try {
            started = spawn.get();
        } catch (RuntimeException notStarted) {
            exit();
            throw notStarted;
        }
        counts.countCoroutine();
        return started;
    }

    /**
     * Admits {@code task} as a coroutine of its own (no deadline, no cancellation) on the caller's
     * loop, or the least loaded one: the slot is held while it runs.
     *
     * @throws CoroutineRejectedException when the limit is reached
     * @throws java.util.concurrent.RejectedExecutionException when the IOManager is stopping (the slot is back)
     */
    void execute(Runnable task) {
        if (!enter(null)) {
            throw rejection();
        }
        Runnable body = () -> {
            try {
                task.run();
            } finally {
                exit();
            }
        };
        start(() -> {
            io.execute(body);
            return null;
        });
    }

    /** Gives a slot back: the coroutine's code has returned. */
    void exit() {
        inFlight.decrementAndGet();
    }
}
