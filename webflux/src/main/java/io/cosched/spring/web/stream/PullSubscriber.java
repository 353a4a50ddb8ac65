package io.cosched.spring.web.stream;

import io.cosched.spring.web.StreamClosedException;
import io.cosched.spring.web.StreamClosedException.Reason;
import java.io.IOException;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;

/**
 * A publisher's elements pulled by blocking code: {@link #next()} parks the calling thread (a coroutine parks, its
 * loop goes on) until an element, the end or a failure arrives. It asks for {@code prefetch} elements at first and
 * for more only as they are taken, so a publisher with backpressure (a connection's body: Reactor Netty stops
 * reading the socket when nothing is asked for) never gets more than that ahead of the reader.
 *
 * <p>One thread takes ({@link #next()}, {@link #close()}); the publisher signals from any thread. Elements left
 * over when the reader closes, or that arrive after, go to {@code discard} (a body's buffers are released).
 */
final class PullSubscriber<T> implements CoreSubscriber<T> {

    private final Publisher<? extends T> source;
    private final StreamRequest request;
    private final Consumer<? super T> discard;
    private final int prefetch;
    private final int replenish;
    private final String what; // for exception messages: "reading the request body"
    private @Nullable Runnable afterClose; // set before the first next()
    // many writers (the publisher), two pollers (the reader, and a close racing a late element): not SPSC
    private final Queue<T> queue = new ConcurrentLinkedQueue<>();

    private final StreamWaiter waiting;

    private volatile @Nullable Subscription upstream;
    private volatile boolean done;
    private @Nullable Throwable failure; // written before done
    private volatile boolean closed;
    // what ends a wait: something to take, the end, or the request ending (its streams' reads throw then)
    private final BooleanSupplier arrived;
    private boolean subscribed; // reader only
    private int taken; // reader only: taken since the last request

    PullSubscriber(
            Publisher<? extends T> source,
            StreamRequest request,
            int prefetch,
            Consumer<? super T> discard,
            String what) {
        this.source = source;
        this.request = request;
        this.discard = discard;
        this.prefetch = prefetch;
        this.replenish = Math.max(1, prefetch - (prefetch >> 2));
        this.what = what;
        this.waiting = new StreamWaiter(request, request.limits().readNanos(), null);
        this.arrived = () -> !queue.isEmpty() || done || request.endedBy() != null;
    }

    /**
     * The next element, parking until it arrives; null at the end. The first call subscribes: the request begins
     * to stream then (its request timeout stops, its stream's time limits start).
     *
     * @throws StreamClosedException when the request is ending (the client left, a time limit passed) or the client
     *                               sent nothing for the read timeout
     * @throws IOException           when the publisher failed; the cause is its failure
     */
    @Nullable
    T next() throws IOException {
        if (closed) {
            throw new IOException(what + ": the stream is closed");
        }
        if (!subscribed) {
            open();
        }
        for (; ; ) {
            boolean interrupted = Thread.interrupted();
            if (interrupted || request.endedBy() != null) {
                close();
                throw request.closed(what); // which keeps an interrupt of unknown cause for the caller
            }
            T t = queue.poll();
            if (t != null) {
                if (++taken == replenish) {
                    taken = 0;
                    Subscription s = upstream;
                    if (s != null) {
                        s.request(replenish);
                    }
                }
                return t;
            }
            if (done) {
                if (!queue.isEmpty()) {
                    continue; // arrived before the end was signalled
                }
                Throwable f = failure;
                if (f != null) {
                    throw new BodyReadException(what + " failed: " + f, f);
                }
                return null;
            }
            if (!waiting.park(this, arrived)) {
                close();
                throw new StreamClosedException(
                        Reason.IDLE_TIMEOUT,
                        what + ": the client sent nothing for longer than "
                                + request.limits().readTimeout() + " (cosched.web.stream.read-timeout)");
            }
        }
    }

    /**
     * Subscribes, once, ahead of the first {@link #next()}: the publisher may send up to the prefetch from now on. The
     * request begins to stream.
     *
     * @throws StreamClosedException when the request timed out first
     */
    void open() throws IOException {
        if (subscribed) {
            return;
        }
        subscribed = true;
        if (!request.beginStream()) {
            throw request.closed(what);
        }
        request.closeAtEnd(this);
        source.subscribe(this);
    }

    /**
     * Also runs {@code action} when this closes: what the reader holds of an element already taken, dropped when the
     * request ends (its code has returned by then) however far the reader got. Set before the first {@link #next()}.
     */
    void afterClose(Runnable action) {
        afterClose = action;
    }

    /** Stops taking: cancels the publisher and discards what it sent and will still send. */
    void close() {
        if (closed) {
            return;
        }
        closed = true;
        waiting.close();
        Subscription s = upstream;
        if (s != null) {
            s.cancel();
        }
        drain();
        Runnable a = afterClose;
        if (a != null) {
            a.run();
        }
    }

    private void drain() {
        T t;
        while ((t = queue.poll()) != null) {
            discard.accept(t);
        }
    }

    private void wake() {
        waiting.wake();
    }

    @Override
    public void onSubscribe(Subscription s) {
        upstream = s;
        if (closed) {
            s.cancel();
            return;
        }
        s.request(prefetch);
    }

    @Override
    public void onNext(T t) {
        if (closed) {
            discard.accept(t);
            return;
        }
        queue.offer(t);
        if (closed) {
            drain(); // the reader closed meanwhile and may have drained before this arrived
            return;
        }
        wake();
    }

    @Override
    public void onError(Throwable t) {
        failure = t;
        done = true;
        wake();
    }

    @Override
    public void onComplete() {
        done = true;
        wake();
    }
}
