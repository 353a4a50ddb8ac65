package io.cosched.spring.web.stream;

import io.cosched.Internal;
import io.cosched.Timer;
import io.cosched.TimerManager;
import io.cosched.spring.web.StreamClosedException.Reason;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.web.server.ServerWebExchange;

/**
 * The streams of one coroutine request: the body streams its handler reads, its streamed response, and the
 * stream's max-duration, from the moment the handler opens one until the request's code has returned. Made by its
 * {@link Owner} (the request path's request) when first asked for: most requests stream nothing.
 *
 * <p>How a stream finds its request: through the request a coroutine handler sees, which is a {@link BodySource}
 * (no work for a request that streams nothing: most requests). Where Spring hands over its own exchange instead, the
 * owner is registered on it ({@link #register}): by a functional handler's request as it starts, and by a streamed
 * answer as it is bound, for the result handler that writes it. A handler that runs as no coroutine request finds
 * none, and its streams are detached ({@link StreamRequest#detached}).
 *
 * <p>Wiring between webflux's packages, not an API.
 */
@Internal
public final class RequestStreams implements StreamRequest {

    /** What a request does for its streams; implemented by the request path's request. */
    public interface Owner {

        /** Its streams, made when first asked for. */
        RequestStreams streams();

        /**
         * The request begins to stream: its deadline stops applying. True when it did, or had already; false when
         * the deadline passed first (the stream must not begin).
         */
        boolean stopDeadline();

        /** Why the request is ending early (the client left, its timeout passed, ...), or null while it is not. */
        @Nullable
        Reason endedBy();

        /** The server shuts down: the request ends early ({@link Reason#SHUTDOWN}, unless it already is) and its code is interrupted. */
        void shuttingDown();

        /** The request streamed past {@code limit}: its code is interrupted, and an outcome not yet out is a 503. */
        void streamedTooLong(Duration limit);

        /** The streamed response lost its subscriber: the client went away, or the write failed. */
        void clientGone();
    }

    /** The request a coroutine handler sees: its body is read from the connection, for its request's streams. */
    public interface BodySource {

        /** The streams of the request this is. */
        RequestStreams streams();

        /** The same request, its body straight from the connection. */
        ServerHttpRequest fromConnection();
    }

    private static final String ATTRIBUTE = RequestStreams.class.getName() + ".owner";

    private final Owner owner;
    private final StreamLimits limits;
    private final TimerManager timers;
    private final OpenStreams open;
    private volatile boolean begun; // the deadline has stopped and the max-duration is armed
    private volatile @Nullable Timer maxDuration;
    // a streamed response, set in the request's coroutine before its handling ends
    private volatile @Nullable ResponseStream<?> response;
    // body streams to close at the end: written under this, read without it first (most requests have none)
    private volatile @Nullable List<PullSubscriber<?>> readers;

    /**
     * @param owner  the request
     * @param limits its stream's time limits
     * @param timers the timers of its loop, for the read and write timeouts and the max-duration
     * @param open   the open streams the server's shutdown ends
     */
    public RequestStreams(Owner owner, StreamLimits limits, TimerManager timers, OpenStreams open) {
        this.owner = owner;
        this.limits = limits;
        this.timers = timers;
        this.open = open;
    }

    /**
     * Makes {@code owner} the request whose streams those of {@code exchange} are, for a handler that gets Spring's
     * exchange rather than the request's (a functional one): as its request starts.
     */
    public static void register(ServerWebExchange exchange, Owner owner) {
        exchange.getAttributes().put(ATTRIBUTE, owner);
    }

    /** The streams of {@code exchange}'s coroutine request, or null when its handler runs as none. */
    static @Nullable RequestStreams of(ServerWebExchange exchange) {
        RequestStreams seen = of(exchange.getRequest());
        if (seen != null) {
            return seen;
        }
        Owner owner = exchange.getAttribute(ATTRIBUTE);
        return owner == null ? null : owner.streams();
    }

    /** The streams of the coroutine request that {@code request} is, or null when it is none. */
    static @Nullable RequestStreams of(ServerHttpRequest request) {
        return request instanceof BodySource body ? body.streams() : null;
    }

    // ---- the request path's side

    /** Whether the handler answered with a streamed response. */
    public boolean responds() {
        return response != null;
    }

    /** Produces the streamed response, in the request's coroutine, once its outcome has gone to Spring. */
    public void produce() {
        ResponseStream<?> s = response;
        if (s != null) {
            s.produce();
        }
    }

    /** Nobody will subscribe to the streamed response: the request ended before its outcome went out. */
    public void abandon() {
        ResponseStream<?> s = response;
        if (s != null) {
            s.abandon();
        }
    }

    /** The streamed response, subscribed to but not begun, fails with {@code error} (its request timed out). */
    public void fail(Throwable error) {
        ResponseStream<?> s = response;
        if (s != null) {
            s.fail(error);
        }
    }

    /** The request's code has returned: the response leaves the open streams, the body streams close, the max-duration stops. */
    public void release() {
        ResponseStream<?> s = response;
        if (s != null) {
            open.remove(s);
        }
        if (readers != null) {
            List<PullSubscriber<?>> r;
            synchronized (this) {
                r = List.copyOf(readers);
            }
            r.forEach(PullSubscriber::close);
        }
        Timer limit = maxDuration;
        if (limit != null) {
            limit.cancel();
        }
    }

    // ---- the stream package's side

    /** The handler answered with {@code s}, to produce once the outcome has gone to Spring. */
    void respondWith(ResponseStream<?> s) {
        response = s;
        open.add(s);
    }

    /**
     * Registers this request on {@code exchange} (whose attributes are Spring's exchange's), where the result handler
     * that writes an annotated handler's streamed answer looks for it.
     */
    void registerOn(ServerWebExchange exchange) {
        register(exchange, owner);
    }

    /** The streamed response, when it is the one made for {@code body}. */
    @Nullable
    ResponseStream<?> responseFor(Object body) {
        ResponseStream<?> s = response;
        return s != null && s.body() == body ? s : null;
    }

    @Override
    public boolean beginStream() {
        if (begun) {
            return true;
        }
        if (!owner.stopDeadline()) {
            return false;
        }
        synchronized (this) {
            if (!begun) {
                begun = true;
                Duration limit = limits.maxDuration();
                if (limit != null) {
                    maxDuration = timers.addTimer(limit, () -> owner.streamedTooLong(limit));
                }
            }
        }
        return true;
    }

    @Override
    public @Nullable Reason endedBy() {
        return owner.endedBy();
    }

    @Override
    public StreamLimits limits() {
        return limits;
    }

    @Override
    public TimerManager timers() {
        return timers;
    }

    @Override
    public void streamCancelled() {
        owner.clientGone();
    }

    @Override
    public void shuttingDown() {
        owner.shuttingDown();
    }

    @Override
    public synchronized void closeAtEnd(PullSubscriber<?> reader) {
        List<PullSubscriber<?>> r = readers;
        if (r == null) {
            readers = r = new ArrayList<>(2);
        }
        r.add(reader);
    }
}
