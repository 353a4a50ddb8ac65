package io.cosched.spring.web.server;

import io.cosched.Coroutine;
import io.cosched.Coroutines;
import io.cosched.Timer;
import io.cosched.spring.web.StreamClosedException.Reason;
import io.cosched.spring.web.context.RequestScopes;
import io.cosched.spring.web.stream.RequestStreams;
import io.cosched.spring.web.stream.StreamingSupport;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.time.Duration;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.Function;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Subscription;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.web.server.ServerWebExchange;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Operators;
import reactor.util.context.Context;

/**
 * One request whose handler runs as a coroutine, from admission until its coroutine has returned:
 * the in-flight slot, the deadline, the coroutine, and the outcome on its way back to Spring.
 *
 * <p>Spring usually subscribes on the connection's loop; a filter that finished on another thread
 * (Spring Security's password check, say) subscribes from there. The request takes a slot (or is
 * shed), arms its deadline on the loop's timers and starts one coroutine on the connection's loop,
 * whichever thread subscribed. The coroutine subscribes to the
 * handling and from then on is the request's own executor ({@link #execute}): what the handling
 * waits for before the handler can be invoked (the request body, form data, the session) is
 * delivered into it, so Spring finishes resolving the arguments, and invokes the handler, in this
 * coroutine and never on the loop. The outcome is handed back to the loop, where Spring writes the
 * response.
 *
 * <p>It ends early in three ways: the deadline passes (the coroutine is interrupted and Spring gets a
 * {@link RequestTimeoutException}), Spring cancels (the client went away, or a filter's own timeout;
 * the coroutine is interrupted unless cancel-on-disconnect is off), or the coroutine is interrupted
 * while it waits (it cancels the handling). Whichever way, the slot is held until the coroutine's
 * code has returned, so that {@code inFlight} never undercounts what runs.
 *
 * <p>The deadline is one instant, kept by one timer, and set on the coroutine as its {@link Coroutine#deadline()}
 * before the request's code runs: the task scopes that code opens take it from there, with no timer of their own.
 *
 * <p>A request may stream ({@link RequestStreams}, made when first asked for): read its body as it arrives, or
 * answer with a streamed response, whose producer runs in this coroutine after the outcome went to Spring. From
 * the moment it begins to stream, the deadline no longer applies; the stream's read and write timeouts and
 * max-duration do. What the streams keep is theirs; this keeps the states the deadline and the stream race on.
 *
 * <p>One object per request on purpose: it is Spring's subscription, the handling's subscriber, the coroutine's
 * task and its executor, so a request costs one allocation of the request path's own.
 */
final class InFlightRequest<T> implements CoreSubscriber<T>, Subscription, Executor, Runnable, RequestStreams.Owner {

    // outcome states towards Spring: the outcome goes out once, when both it and a request are there
    private static final int REQUESTED = 1;
    private static final int HAS_VALUE = 2;
    private static final int TERMINATED = 4; // delivered, timed out or cancelled: nothing more goes out
    private static final int STREAMING = 8; // began to stream: the deadline no longer applies
    private static final int EXPIRED = 16; // the deadline passed first: the stream must not begin
    private static final int DELIVERED = REQUESTED | HAS_VALUE;

    private static final VarHandle STATE;
    private static final Log LOG = LogFactory.getLog(InFlightRequest.class);

    static {
        try {
            STATE = MethodHandles.lookup().findVarHandle(InFlightRequest.class, "state", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final RequestServices services;
    private final RequestPolicy policy;
    private final ServerWebExchange exchange; // for the log line of a cancelled request
    private final CoreSubscriber<? super T> actual;
    private final Function<InFlightRequest<T>, Mono<T>> handling;
    // where the coroutine runs and the outcome goes; null: where the IOManager places it, outcome
    // straight from the coroutine
    private final CoroutineRequests.@Nullable IOLoop loop;
    private final Queue<Runnable> tasks = new ConcurrentLinkedQueue<>();
    // when it took its slot (or, while queued, asked for one): written before its coroutine is spawned and its
    // deadline armed, which publish it to them; the cancel's log line may read it late, which costs nothing
    private long admittedNanos;
    private volatile Admission.@Nullable Waiter waiter; // while it waits in the admission queue

    @SuppressWarnings("unused") // through STATE
    private volatile int state;

    private volatile @Nullable Coroutine<?> coroutine;
    private volatile boolean interruptWanted;
    private volatile boolean handled; // the handling signalled its end
    private volatile @Nullable Timer deadline;
    private volatile @Nullable Reason endedBy; // why it is ending early, for its streams' exceptions
    private volatile @Nullable RequestStreams streams; // made when first asked for: most requests stream nothing
    private boolean streamed; // coroutine only: the outcome went out before the stream's producer ran
    // written by the handling before `handled`, read after it
    private @Nullable T value;
    private @Nullable Throwable error;
    private @Nullable Subscription upstream;

    InFlightRequest(
            RequestServices services,
            RequestPolicy policy,
            ServerWebExchange exchange,
            CoreSubscriber<? super T> actual,
            Function<InFlightRequest<T>, Mono<T>> handling,
            CoroutineRequests.@Nullable IOLoop loop) {
        this.services = services;
        this.policy = policy;
        this.exchange = exchange;
        this.actual = actual;
        this.handling = handling;
        this.loop = loop;
    }

    /**
     * Admits the request and starts its coroutine, queues it, or sheds it; called once, by the subscribing thread.
     */
    void start() {
        actual.onSubscribe(this);
        admittedNanos = System.nanoTime();
        Admission admission = services.admission();
        if (admission.tryEnter()) {
            begin(false);
            return;
        }
        waiter = admission.queue(exchange, () -> begin(true), this::queueTimedOut);
        if (waiter == null) {
            admission.shed(exchange);
            if (terminate()) {
                actual.onError(admission.rejection());
            }
        } else if (((int) STATE.getVolatile(this) & TERMINATED) != 0) {
            leaveQueue(); // cancelled while it was being queued
        }
    }

    /** It waited in the admission queue for as long as it may (the admission has counted it as shed). */
    private void queueTimedOut() {
        if (terminate()) {
            actual.onError(services.admission().queueTimeout());
        }
    }

    /** Cancelled while queued: it leaves the queue, or, admitted meanwhile, its coroutine sees the interrupt wanted. */
    private void leaveQueue() {
        Admission.Waiter w = waiter;
        if (w != null) {
            services.admission().leave(w);
        }
    }

    /**
     * Starts the coroutine of the admitted request: from the subscribing thread, or ({@code queued}) from the thread
     * that gave back the slot it waited for.
     */
    private void begin(boolean queued) {
        if (queued) {
            admittedNanos = System.nanoTime(); // its time runs from the slot, not from the queue
        }
        CoroutineRequests.IOLoop l = loop;
        int connectionLoop = l == null || l.eventLoop().inEventLoop() ? -1 : l.index(); // when not on it
        boolean onLoop = connectionLoop < 0;
        if (onLoop) {
            armDeadline(); // on this loop's timers: it cannot fire before this method has returned
        }
        Coroutine<?> started;
        try {
            if (onLoop) {
                started = services.admission().start(() -> services.io().spawn(this));
            } else {
                // back to the connection's loop: one hand-off, where the subscribing thread's loop
                // (if any) would keep the coroutine and its I/O away from the connection for good
                if (!queued) { // a queued one is started by the coroutine that gave its slot back, on any loop
                    services.counts().countOffLoop();
                }
                started = services.admission()
                        .start(() -> services.io().spawnOn(connectionLoop, () -> {
                            armDeadline(); // from the loop, as when Spring subscribes there
                            run();
                            return null;
                        }));
            }
        } catch (RuntimeException notStarted) { // the IOManager is stopping; the slot is back
            cancelDeadline();
            if (terminate()) {
                actual.onError(notStarted);
            }
            return;
        }
        started.attach(this); // the dump shows which request it serves (toString)
        coroutine = started;
        if (interruptWanted) {
            started.interrupt(); // cancelled while it was being started
        }
    }

    private void armDeadline() {
        Duration timeout = policy.timeout();
        if (timeout != null && (state & TERMINATED) == 0) {
            deadline = services.io().timers().addTimer(timeout, () -> expire(timeout, false));
        }
    }

    /**
     * The handler answered with a stream: with {@code cosched.web.stream.first-byte-timeout}, that limit replaces the
     * request timeout until the first byte (a producer that waits for its first event, many streams opened at once on
     * a cold instance). A request deadline that fires meanwhile (in fallback mode the coroutine is not on its timer's
     * loop) has answered the request and set EXPIRED; the first-byte timer then finds that and does nothing.
     */
    private void armFirstByte() {
        Duration limit = policy.streams().firstByteTimeout();
        if (limit == null || (state & (STREAMING | EXPIRED)) != 0) {
            return;
        }
        cancelDeadline();
        deadline = services.io().timers().addTimer(limit, () -> expire(limit, true));
        Coroutine<?> self = coroutine;
        if (self != null) { // the scopes the producer opens end with the first-byte limit now
            self.deadline(System.nanoTime() + limit.toNanos());
        }
    }

    /** The coroutine: runs the handling, then hands its outcome back. */
    @Override
    public void run() {
        Coroutine<?> self = Coroutines.current().orElseThrow();
        self.attach(this); // a dump shows which request it serves
        Duration timeout = policy.timeout();
        if (timeout != null) { // before any code of the request runs: its task scopes take it, with no timer
            self.deadline(admittedNanos + timeout.toNanos());
        }
        coroutine = self;
        try {
            if (!interruptWanted) {
                policy.restorer()
                        .wrap(actual.currentContext(), RequestScopes.withRequestLocale(exchange, this::serve))
                        .run();
            }
        } catch (Throwable failed) {
            if (error == null) {
                error = failed;
            }
        } finally {
            release();
            if (!streamed) {
                handOver();
            }
        }
    }

    /**
     * Runs the handling; a streamed response then goes to Spring first, which subscribes to it on the loop,
     * and its producer runs here, with the request's context still set.
     */
    private void serve() {
        handle();
        RequestStreams s = streams;
        if (s != null && s.responds() && error == null) {
            streamed = true;
            armFirstByte();
            handOver();
            s.produce();
        }
    }

    @Override
    public RequestStreams streams() {
        RequestStreams s = streams;
        if (s == null) {
            synchronized (this) {
                s = streams;
                if (s == null) {
                    streams = s = new RequestStreams(
                            this, policy.streams(), services.io().timers(), services.streams());
                }
            }
        }
        return s;
    }

    /** Subscribes to the handling and runs what is delivered for it until it has ended. */
    private void handle() {
        handling.apply(this).subscribe(this);
        while (!handled) {
            Runnable task = tasks.poll();
            if (task != null) {
                task.run();
                continue;
            }
            try {
                Coroutines.suspend();
            } catch (InterruptedException interrupted) {
                Subscription s = upstream;
                if (s != null) {
                    s.cancel(); // stop reading the body, or whatever else it waits for
                }
                // after a timeout or a cancel nobody waits for this; interrupted by anything else
                // (the IOManager stopping), the request fails rather than answering empty
                error = interrupted;
                return;
            }
        }
    }

    /** Runs {@code task} in this request's coroutine: at once when called from it, else next. */
    @Override
    public void execute(Runnable task) {
        Coroutine<?> self = coroutine;
        if (self != null && Thread.currentThread() == self.thread()) {
            task.run();
            return;
        }
        tasks.add(task);
        wake();
    }

    private void wake() {
        Coroutine<?> self = coroutine;
        if (self != null) {
            self.resume(); // kept when it comes before the coroutine suspends
        }
    }

    // ---- the handling's signals, from the coroutine or from whatever thread completed it

    @Override
    public void onSubscribe(Subscription s) {
        upstream = s;
        s.request(Long.MAX_VALUE);
    }

    @Override
    public void onNext(T t) {
        value = t;
    }

    @Override
    public void onError(Throwable t) {
        error = t;
        ended();
    }

    @Override
    public void onComplete() {
        ended();
    }

    private void ended() {
        handled = true;
        Coroutine<?> self = coroutine;
        if (self != null && Thread.currentThread() != self.thread()) {
            self.resume();
        }
    }

    @Override
    public Context currentContext() {
        return actual.currentContext();
    }

    // ---- towards Spring

    @Override
    public void request(long n) {
        if (n <= 0) {
            Operators.reportBadRequest(n);
            return;
        }
        arrive(REQUESTED);
    }

    /** Spring no longer wants the outcome: the client went away, or something upstream gave up. */
    @Override
    public void cancel() {
        if (!terminate()) {
            return;
        }
        abandonStream();
        cancelled();
    }

    @Override
    public void clientGone() {
        cancelled();
    }

    /** The client went away (or a filter gave up) before the request ended. */
    private void cancelled() {
        if (endedBy == null) {
            endedBy = Reason.CLIENT_GONE;
        }
        services.counts().countCancelled();
        boolean interrupt = policy.cancelOnDisconnect();
        WebEvents.cancelled(exchange, System.nanoTime() - admittedNanos, interrupt);
        if (LOG.isDebugEnabled()) {
            ServerHttpRequest r = exchange.getRequest();
            LOG.debug(r.getMethod() + " " + r.getPath() + " cancelled after "
                    + (System.nanoTime() - admittedNanos) / 1_000_000
                    + " ms (the client went away, or a filter gave up); "
                    + (interrupt
                            ? "its handler is interrupted"
                            : "its handler runs on (cosched.web.cancel-on-disconnect=false)"));
        }
        leaveQueue();
        if (interrupt) {
            interrupt();
        }
    }

    /**
     * The deadline passed ({@code timeout}: the request timeout, or with {@code firstByte} the first-byte limit that
     * replaced it). Before the outcome went out, Spring gets a {@link RequestTimeoutException}; after, the streamed
     * response that has not begun fails with it (answered 503 all the same); once the request streams, the deadline
     * no longer applies.
     */
    private void expire(Duration timeout, boolean firstByte) {
        int s;
        do {
            s = state;
            boolean streamPending = (s & DELIVERED) == DELIVERED && streams != null && streams.responds();
            if ((s & (STREAMING | EXPIRED)) != 0 || ((s & TERMINATED) != 0 && !streamPending)) {
                return;
            }
        } while (!STATE.compareAndSet(this, s, s | TERMINATED | EXPIRED));
        endedBy = Reason.REQUEST_TIMEOUT;
        services.counts().countTimedOut();
        WebEvents.timeout(exchange, timeout.toNanos());
        interrupt();
        RequestTimeoutException timedOut =
                firstByte ? RequestTimeoutException.noFirstByte(timeout) : new RequestTimeoutException(timeout);
        RequestStreams pending = streams;
        if ((s & TERMINATED) == 0) {
            if (pending != null) {
                pending.abandon();
            }
            actual.onError(timedOut);
        } else if (pending != null) {
            pending.fail(timedOut);
        }
    }

    @Override
    public boolean stopDeadline() {
        for (; ; ) {
            int s = state;
            if ((s & STREAMING) != 0) {
                return true;
            }
            if ((s & EXPIRED) != 0) {
                return false;
            }
            if (STATE.compareAndSet(this, s, s | STREAMING)) {
                break;
            }
        }
        cancelDeadline();
        Coroutine<?> self = coroutine;
        if (self != null) {
            self.clearDeadline(); // the scopes it opens from now on have none: nothing interrupts it at one
        }
        return true;
    }

    /**
     * The request streamed past its max-duration: its coroutine is interrupted, and a request whose outcome has not
     * gone to Spring yet (still reading its body) is answered 503 at once, as for the request timeout.
     */
    @Override
    public void streamedTooLong(Duration limit) {
        endedBy = Reason.MAX_DURATION;
        // ended before the interrupt: the handler it wakes must not get its own failure out first
        boolean answer = terminate();
        interrupt();
        if (answer) {
            services.counts().countTimedOut();
            WebEvents.timeout(exchange, limit.toNanos());
            abandonStream();
            actual.onError(RequestTimeoutException.streamedTooLong(limit));
        }
    }

    @Override
    public @Nullable Reason endedBy() {
        return endedBy;
    }

    /** The server shuts down: the stream's producer is interrupted, and its sends throw from now on. */
    @Override
    public void shuttingDown() {
        if (endedBy == null) {
            endedBy = Reason.SHUTDOWN;
        }
        interrupt();
    }

    /** Nobody will subscribe to the streamed response: the request ended before its outcome went out. */
    private void abandonStream() {
        RequestStreams s = streams;
        if (s != null) {
            s.abandon();
        }
    }

    /**
     * Interrupts the coroutine: at once, or, while it holds a pooled connection (a {@link io.cosched.Shield}),
     * once it has given the connection back, so that the interrupt never breaks the connection. Not
     * {@link Coroutine#cancel()}: a coroutine cancelled before it ran never runs its code, and this
     * request's code is what gives the slot back.
     */
    private void interrupt() {
        interruptWanted = true;
        Coroutine<?> c = coroutine;
        if (c != null) {
            c.interrupt();
        }
    }

    /** Frees the slot, the deadline, the stream's limit and the body streams: the coroutine's code has returned. */
    private void release() {
        RequestStreams s = streams;
        if (s != null) {
            s.release();
        }
        cancelDeadline();
        if (streamed || ((int) STATE.getVolatile(this) & STREAMING) != 0) {
            services.admission().exit(); // a stream's length says nothing of how fast requests are served
        } else {
            services.admission().exit(admittedNanos);
        }
    }

    private void cancelDeadline() {
        Timer t = deadline;
        if (t != null) {
            t.cancel();
        }
    }

    /** The coroutine is done: its outcome goes to Spring on the request's loop. */
    private void handOver() {
        if ((state & TERMINATED) != 0) {
            abandonStream();
            return; // timed out or cancelled: nobody waits for it
        }
        CoroutineRequests.IOLoop l = loop;
        if (l != null) {
            try {
                l.eventLoop().execute(this::deliver);
                return;
            } catch (RejectedExecutionException loopStopped) {
                // deliver from here: Netty queues the writes for a loop that still runs
            }
        }
        deliver();
    }

    private void deliver() {
        Throwable e = error;
        if (e != null) {
            if (terminate()) {
                // a streamed body's failure as Spring's own for a @RequestBody (413, 400, 408), before Spring looks for
                // the application's exception handlers: its @ControllerAdvice (problem details) renders it as it
                // renders Spring's
                Throwable mapped = StreamingSupport.springError(e);
                actual.onError(mapped == null ? e : mapped);
            }
            return;
        }
        if (value == null) {
            if (terminate()) {
                actual.onComplete();
            }
            return;
        }
        if (!arrive(HAS_VALUE)) {
            abandonStream(); // timed out or cancelled meanwhile
        }
    }

    /**
     * Records a request or the value; whichever comes second emits the value, once. Neither counts
     * after the exchange has ended (timed out, cancelled).
     *
     * @return false when the exchange had ended
     */
    private boolean arrive(int bit) {
        for (; ; ) {
            int s = state;
            if ((s & TERMINATED) != 0) {
                return false;
            }
            if ((s & bit) != 0) {
                return true;
            }
            int next = s | bit;
            boolean both = (next & DELIVERED) == DELIVERED;
            if (STATE.compareAndSet(this, s, both ? next | TERMINATED : next)) {
                if (both) {
                    emit();
                }
                return true;
            }
        }
    }

    private void emit() {
        T v = value;
        value = null;
        if (v != null) {
            actual.onNext(v);
        }
        actual.onComplete();
    }

    /** @return true for the one caller that ends the exchange with Spring */
    private boolean terminate() {
        for (; ; ) {
            int s = state;
            if ((s & TERMINATED) != 0) {
                return false;
            }
            if (STATE.compareAndSet(this, s, s | TERMINATED)) {
                return true;
            }
        }
    }

    /** What the coroutine serves, for dumps: method, path pattern (else the path) and age. */
    @Override
    public String toString() {
        return exchange.getRequest().getMethod().name() + " " + WebEvents.path(exchange) + ", admitted "
                + (System.nanoTime() - admittedNanos) / 1_000_000 + " ms ago";
    }
}
