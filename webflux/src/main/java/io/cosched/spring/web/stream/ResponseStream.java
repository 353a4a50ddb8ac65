package io.cosched.spring.web.stream;

import io.cosched.spring.web.EventStream;
import io.cosched.spring.web.StreamClosedException;
import io.cosched.spring.web.StreamClosedException.Reason;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;
import reactor.core.publisher.Operators;

/**
 * A streamed response: the publisher Spring writes (it subscribes on the loop once the handler's outcome is
 * there), fed by blocking code through {@link #send} from the thread that runs {@link #produce()} (the request's
 * coroutine). A send goes straight to the subscriber when it has asked for more; else it parks the producer until
 * it does, so the producer runs no further ahead of the client than Spring and Reactor Netty ask for. The
 * subscriber's cancel (the client went away, a write failed) fails the next send and tells the request, which
 * interrupts its coroutine.
 *
 * <p>At shutdown ({@link OpenStreams}) a server-sent-events stream is told at once: its request ends with
 * {@link Reason#SHUTDOWN}, the producer's next send throws, its wait is interrupted, and the response completes as
 * if the producer had returned (the client reconnects, to another instance). Any other stream goes on until the
 * shutdown's grace has passed and is then {@link #cut}: a body cut short must not look whole to its client.
 *
 * <p>Threads: the producer signals {@code onNext}, {@code onComplete} and {@code onError}; Spring requests and
 * cancels from the loop. The one signal from elsewhere, the request's timeout before the stream began
 * ({@link #fail}), cannot meet the producer's: both first pass {@link StreamRequest#beginStream()}, and only one
 * of them gets through.
 */
final class ResponseStream<T> implements Publisher<T>, Subscription, EventStream.Emitter<T> {

    private static final Log LOG = LogFactory.getLog(ResponseStream.class);

    /** What runs the handler's code, given the stream to send into. */
    @FunctionalInterface
    interface Producer<T> {
        void produce(ResponseStream<T> stream) throws Exception;
    }

    private final Object body; // what the handler answered with: the result handler looks it up
    private final StreamRequest request;
    private final Producer<T> producer;
    private final Consumer<? super T> discard; // for an element that could not be sent
    private final @Nullable Runnable abort; // closes the connection; null when the server is not known
    private final BooleanSupplier writtenAsEvents; // asked once Spring subscribes: the response's type is known
    private final StreamWaiter waiting;

    private final AtomicLong requested = new AtomicLong();
    private volatile @Nullable Subscriber<? super T> subscriber;
    private volatile boolean ready; // onSubscribe has returned: signals may flow
    private volatile boolean cancelled; // cancelled by the subscriber, or nobody will subscribe
    private volatile boolean terminated; // a terminal signal went out
    private volatile boolean events; // written as server-sent events: may end cleanly after any event
    private volatile boolean stopping; // the server shuts down
    private final AtomicBoolean told = new AtomicBoolean(); // the request was told of the shutdown
    private @Nullable Throwable early; // guarded by this: a failure before the subscriber was ready
    private boolean begun; // producer only: passed beginStream
    // what ends a wait for demand: demand, the subscriber gone, or the request ending (a send throws then)
    private final BooleanSupplier demanded;
    private final BooleanSupplier subscribed = () -> cancelled || ready;

    /**
     * @param progress        the connection's bytes still to be written, or null: how the write timeout tells a client
     *                        that reads slowly from one that reads nothing
     * @param writtenAsEvents whether the response goes out as server-sent events, asked when Spring subscribes
     */
    ResponseStream(
            Object body,
            StreamRequest request,
            Producer<T> producer,
            Consumer<? super T> discard,
            @Nullable Runnable abort,
            @Nullable LongSupplier progress,
            BooleanSupplier writtenAsEvents) {
        this.body = body;
        this.request = request;
        this.producer = producer;
        this.discard = discard;
        this.abort = abort;
        this.writtenAsEvents = writtenAsEvents;
        this.waiting = new StreamWaiter(request, request.limits().writeNanos(), progress);
        this.demanded = () -> cancelled || (ready && requested.get() > 0) || request.endedBy() != null;
    }

    Object body() {
        return body;
    }

    // ---- towards Spring

    @Override
    public void subscribe(Subscriber<? super T> s) {
        synchronized (this) {
            if (subscriber != null) {
                Operators.error(
                        s, new IllegalStateException("a streamed response is written once (a second subscriber came)"));
                return;
            }
            subscriber = s;
        }
        if (writtenAsEvents.getAsBoolean()) {
            events = true;
            if (stopping) {
                tellShutdown(); // the shutdown began before the response's type was known
            }
        }
        s.onSubscribe(this);
        Throwable e;
        synchronized (this) {
            ready = true;
            e = early;
        }
        if (e != null) {
            terminated = true;
            s.onError(e);
        }
        wake();
    }

    @Override
    public void request(long n) {
        if (n <= 0) {
            Operators.reportBadRequest(n);
            return;
        }
        requested.getAndAccumulate(n, Operators::addCap);
        wake();
    }

    /** Spring stopped writing: the client went away, or a write failed. */
    @Override
    public void cancel() {
        if (cancelled || terminated) {
            return;
        }
        cancelled = true;
        request.streamCancelled();
        wake();
    }

    /** The request timed out before the stream began: its subscriber gets {@code failure} (answered 503). */
    void fail(Throwable failure) {
        Subscriber<? super T> s;
        synchronized (this) {
            if (!ready) {
                early = failure;
                return;
            }
            s = subscriber;
        }
        terminated = true;
        Objects.requireNonNull(s).onError(failure);
    }

    /** Nobody will subscribe: the request ended before its outcome went to Spring. */
    void abandon() {
        cancelled = true;
        wake();
    }

    // ---- the server's shutdown

    /**
     * The server shuts down: a stream written as server-sent events is told now, any other goes on until it is
     * {@link #cut}. Either order with the subscription tells an event stream once.
     */
    void serverStopping() {
        stopping = true;
        if (events) {
            tellShutdown();
        }
    }

    /**
     * The shutdown's grace has passed: the request is told, and the connection closed whatever its producer does
     * (Spring's write then cancels, as for a client gone). Without a known connection, the producer's failure fails
     * the response when it lets it out.
     */
    void cut() {
        stopping = true;
        tellShutdown();
        if (abort != null) {
            abort.run();
        }
    }

    private void tellShutdown() {
        if (told.compareAndSet(false, true)) {
            request.shuttingDown();
            wake();
        }
    }

    // ---- the producer's side

    /** Runs the handler's code; then completes the response, or fails it with what the code threw. */
    void produce() {
        try {
            produceAndEnd();
        } finally {
            waiting.close();
        }
    }

    private void produceAndEnd() {
        Throwable failure = null;
        try {
            producer.produce(this);
        } catch (Throwable t) {
            failure = t;
        }
        if (cancelled) {
            if (failure != null
                    && !(failure instanceof StreamClosedException
                            || failure instanceof InterruptedException
                            || failure instanceof InterruptedIOException)
                    && LOG.isDebugEnabled()) {
                LOG.debug("a streamed response's producer failed after its client went away", failure);
            }
            return;
        }
        if (!awaitSubscriber()) {
            return; // nobody will subscribe
        }
        if (!begun && !request.beginStream()) {
            return; // the request timed out first: its 503 went out through fail()
        }
        terminated = true;
        Subscriber<? super T> s = Objects.requireNonNull(subscriber);
        if (failure == null) {
            s.onComplete();
        } else if (events && told.get() && request.endedBy() == Reason.SHUTDOWN) {
            // told of the shutdown, however the producer let it out: an event stream may end after any event, and
            // its client reconnects with the last id it got
            if (LOG.isDebugEnabled()) {
                LOG.debug("a server-sent-events stream ended at shutdown: " + failure);
            }
            s.onComplete();
        } else if (begun && abort != null && endedByLimit(failure)) {
            // a stream cut by its own limit is not a server error: the connection closes, so that the client cannot
            // take the cut-short body for a whole one, without the error logs of a failed response
            if (LOG.isDebugEnabled()) {
                LOG.debug("a streamed response was cut: " + failure);
            }
            abort.run();
            s.onComplete();
        } else {
            s.onError(failure);
        }
    }

    /** Whether the producer ended because a stream limit passed (idle, max-duration, the shutdown's grace), however it threw. */
    private boolean endedByLimit(Throwable failure) {
        Reason reason = request.endedBy();
        if (reason == Reason.MAX_DURATION || reason == Reason.SHUTDOWN) {
            return true;
        }
        for (Throwable t = failure; t != null && t.getCause() != t; t = t.getCause()) {
            if (t instanceof StreamClosedException closed && closed.reason() != Reason.CLIENT_GONE) {
                return true;
            }
        }
        return false;
    }

    @Override
    public void send(T element) throws IOException {
        Objects.requireNonNull(element, "element: null (expected: an element to send)");
        try {
            awaitDemand();
            if (!begun) {
                if (!request.beginStream()) {
                    throw request.closed("send");
                }
                begun = true;
            }
        } catch (IOException e) {
            discard.accept(element);
            throw e;
        }
        if (requested.get() != Long.MAX_VALUE) {
            requested.decrementAndGet();
        }
        Objects.requireNonNull(subscriber).onNext(element);
    }

    /**
     * Parks until the subscriber is ready and has asked for more; throws when the stream ended meanwhile, the
     * request is ending, the coroutine was interrupted, or the client took nothing for the write timeout.
     */
    private void awaitDemand() throws IOException {
        for (; ; ) {
            boolean interrupted = Thread.interrupted();
            if (cancelled || interrupted || request.endedBy() != null) {
                throw cancelled && request.endedBy() == null
                        ? new StreamClosedException(
                                Reason.CLIENT_GONE, "send: " + StreamRequest.message(Reason.CLIENT_GONE))
                        : request.closed("send");
            }
            if (ready && requested.get() > 0) {
                return;
            }
            if (!waiting.park(this, demanded)) {
                throw new StreamClosedException(
                        Reason.IDLE_TIMEOUT,
                        "send: the client took nothing for longer than "
                                + request.limits().writeTimeout() + " (cosched.web.stream.write-timeout)");
            }
        }
    }

    /**
     * Parks until the subscriber is ready, for the last signal: whatever else ended the stream, the subscriber is
     * told how. False when nobody will subscribe. Spring subscribes as soon as the outcome reaches it, so this is
     * a short wait, not bounded by the write timeout.
     */
    private boolean awaitSubscriber() {
        boolean interrupted = false;
        while (!ready && !cancelled) {
            waiting.parkUntimed(this, subscribed);
            interrupted |= Thread.interrupted();
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
        return ready;
    }

    private void wake() {
        waiting.wake();
    }
}
