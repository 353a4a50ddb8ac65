package io.cosched.spring.web.server;

import io.cosched.IOManager;
import io.cosched.Internal;
import io.cosched.Timer;
import java.time.Duration;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.springframework.http.HttpStatus;
import org.springframework.web.server.ServerWebExchange;

/**
 * The in-flight limit of coroutine requests, for every way a handler becomes a coroutine (a
 * request's own coroutine, a hand-off of Spring's blocking execution): a slot is taken before the
 * coroutine starts and given back when its code has returned, or at once when it could not start;
 * what was shed and what started is counted. The slots are its own: the stats read how many are taken.
 *
 * <p>The limit is fixed, or follows the latency of what it admits ({@link GradientLimit}). A request over it may wait
 * in a queue of bounded size for a bounded time ({@link AdmissionControl#withQueue}): a slot given back goes to the
 * longest waiting one before any newcomer, and one whose time runs out is shed.
 */
@Internal
public final class Admission {

    private final IOManager io;
    private final AtomicInteger inFlight = new AtomicInteger();
    private final AtomicInteger queued = new AtomicInteger();
    private final Queue<Waiter> waiters = new ConcurrentLinkedQueue<>();
    private final RequestCounters counts;
    private final int fixedLimit;
    private final @Nullable GradientLimit adaptive;
    private final int queueSize;
    private final Duration queueTimeout;
    private final HttpStatus status;
    private final int retryAfterMaxSeconds;

    Admission(IOManager io, AdmissionControl control) {
        this.io = io;
        this.fixedLimit = control.limit();
        this.adaptive = control.adaptive()
                ? new GradientLimit(control.floor(), control.limit(), control.tolerance(), System.nanoTime())
                : null;
        this.queueSize = control.queueSize();
        this.queueTimeout = control.queueTimeout();
        this.status = control.status();
        this.retryAfterMaxSeconds = control.retryAfterMaxSeconds();
        this.counts = new RequestCounters(inFlight::get, this::limit, queued::get);
    }

    /** How many coroutine requests may hold a slot now. */
    public int limit() {
        GradientLimit a = adaptive;
        return a == null ? fixedLimit : a.limit();
    }

    /** The status a shed request is answered with: 503, or 429 where so configured. */
    public HttpStatus status() {
        return status;
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

    /** Takes a slot if one is free; nothing is counted. */
    boolean tryEnter() {
        for (; ; ) {
            int n = inFlight.get();
            if (n >= limit()) {
                return false;
            }
            if (inFlight.compareAndSet(n, n + 1)) {
                return true;
            }
        }
    }

    /**
     * Takes a slot; false, counted and recorded as shed, when the limit is reached. {@code exchange}: the request,
     * null for a hand-off of Spring's blocking execution (which never waits in the queue: its caller cannot be
     * told later that it was shed).
     */
    boolean enter(@Nullable ServerWebExchange exchange) {
        if (tryEnter()) {
            return true;
        }
        shed(exchange);
        return false;
    }

    /** Counts and records a request shed at the limit. */
    void shed(@Nullable ServerWebExchange exchange) {
        counts.countShed();
        WebEvents.shed(exchange, limit());
    }

    /**
     * Queues a request the limit refused: {@code admitted} runs, holding a slot, on the thread that gave one back, or
     * {@code timedOut} on a timer's thread once the queue timeout has passed (it is then counted as shed). Null, and
     * nothing counted, when there is no queue, it is full, or no timer can be armed (the IOManager is stopping).
     */
    @Nullable
    Waiter queue(ServerWebExchange exchange, Runnable admitted, Runnable timedOut) {
        for (; ; ) {
            int q = queued.get();
            if (q >= queueSize) {
                return null;
            }
            if (queued.compareAndSet(q, q + 1)) {
                break;
            }
        }
        Waiter w = new Waiter(admitted);
        try {
            w.timer = io.timers().addTimer(queueTimeout, () -> {
                if (leave(w)) {
                    counts.countShed();
                    counts.countQueueTimedOut();
                    WebEvents.shed(exchange, limit());
                    timedOut.run();
                }
            });
        } catch (RuntimeException stopping) { // no timer to bound its wait: it is not queued
            queued.decrementAndGet();
            return null;
        }
        waiters.add(w);
        drain(); // a slot given back while it was being queued found no waiter
        return w;
    }

    /** Takes {@code w} out of the queue (cancelled, or out of time); false when it was admitted first. */
    boolean leave(Waiter w) {
        if (!w.compareAndSet(Waiter.WAITING, Waiter.LEFT)) {
            return false;
        }
        queued.decrementAndGet();
        Timer t = w.timer;
        if (t != null) {
            t.cancel();
        }
        // out of the queue at once (a walk of at most queue-size waiters): while the slots stay taken (long streams,
        // say) no drain would reach it, and every request that timed out in the queue would stay in it
        waiters.remove(w);
        return true;
    }

    /**
     * Hands free slots to the waiters in arrival order. Both sides call it after their change (a waiter once queued, a
     * slot once given back), so that a free slot and a waiting request never miss each other.
     */
    private void drain() {
        while (!waiters.isEmpty() && tryEnter()) {
            Waiter w = waiters.poll();
            if (w == null || !w.compareAndSet(Waiter.WAITING, Waiter.ADMITTED)) {
                inFlight.decrementAndGet(); // nobody (left) to give it to
                continue;
            }
            queued.decrementAndGet();
            Timer t = w.timer;
            if (t != null) {
                t.cancel();
            }
            w.admitted.run();
        }
    }

    /** How many waiters the queue holds now, left ones included until they are out (for tests). */
    int waiting() {
        return waiters.size();
    }

    /** Whether a request arriving now would be shed: the limit is reached and the queue full (a look). */
    public boolean full() {
        return inFlight.get() >= limit() && queued.get() >= queueSize;
    }

    /** Counts and records a request shed before WebFlux saw it ({@code EarlyShedding}), as its request line says. */
    public void shedEarly(String method, String uri) {
        counts.countShed();
        counts.countShedEarly();
        WebEvents.shedEarly(method, uri, limit());
    }

    /** What a request shed at the limit fails with. */
    CoroutineRejectedException rejection() {
        return new CoroutineRejectedException(limitDescription());
    }

    /** What a request that waited out the queue timeout fails with. */
    CoroutineRejectedException queueTimeout() {
        return new CoroutineRejectedException("no slot within cosched.web.admission.queue-timeout ("
                + queueTimeout.toMillis() + " ms; " + limitDescription() + ")");
    }

    private String limitDescription() {
        return adaptive == null
                ? "too many requests in flight (cosched.web.max-in-flight: " + fixedLimit + ")"
                : "too many requests in flight (adaptive limit now: " + limit() + ")";
    }

    /**
     * The body of the answer to a shed request, made once for every request shed before WebFlux: RFC 9457 problem
     * details, as WebFlux's answer is; without the adaptive limit's value of the moment.
     */
    public String rejectionProblem() {
        String detail = adaptive == null
                ? limitDescription()
                : "too many requests in flight (cosched.web.admission.limit: adaptive)";
        return UnavailableResponses.problem(status, detail);
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
            long began = adaptive == null ? 0 : System.nanoTime(); // only an adaptive limit reads it
            try {
                task.run();
            } finally {
                exit(began);
            }
        };
        start(() -> {
            io.execute(body);
            return null;
        });
    }

    /** Gives a slot back without a latency sample: the coroutine never ran, or it streamed. */
    void exit() {
        inFlight.decrementAndGet();
        if (queueSize > 0 && !waiters.isEmpty()) {
            drain();
        }
    }

    /** Gives a slot back: the code of a request admitted at {@code admittedNanos} has returned. */
    void exit(long admittedNanos) {
        GradientLimit a = adaptive;
        if (a != null) {
            long now = System.nanoTime();
            if (a.sample(now - admittedNanos, inFlight.get(), now) && queueSize > 0) {
                drain(); // the limit grew
            }
        }
        exit();
    }

    /** A request waiting in the queue. */
    @SuppressWarnings("serial") // never serialized: its state word, without an object of its own
    static final class Waiter extends AtomicInteger {
        static final int WAITING = 0;
        static final int ADMITTED = 1;
        static final int LEFT = 2;

        final Runnable admitted;
        volatile @Nullable Timer timer;

        Waiter(Runnable admitted) {
            this.admitted = admitted;
        }
    }

    @Override
    public String toString() {
        return "Admission[inFlight=" + inFlight.get() + ", limit=" + limit() + ", queued=" + queued.get() + "/"
                + queueSize + (adaptive == null ? "" : ", " + adaptive) + "]";
    }
}
