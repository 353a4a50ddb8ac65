package io.cosched.spring.http.client.reactive;

import io.cosched.http.client.LoopExchange;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.handler.codec.http.HttpHeaderNames;
import java.net.HttpCookie;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Subscription;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.NettyDataBufferFactory;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.ResponseCookie;
import org.springframework.http.client.reactive.ClientHttpResponse;
import org.springframework.http.support.Netty4HeadersAdapter;
import org.springframework.util.LinkedMultiValueMap;
import org.springframework.util.MultiValueMap;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Operators;

/**
 * The answer of a {@link LoopExchange} as {@code WebClient} reads it: status, headers and cookies as
 * received, and a body that can be subscribed once, read from the connection as its subscriber asks
 * for it, on the connection's loop. Cancelling the body leaves the rest to the loop, which keeps the
 * connection.
 */
final class LoopClientHttpResponse implements ClientHttpResponse {

    private static final NettyDataBufferFactory BUFFERS = new NettyDataBufferFactory(ByteBufAllocator.DEFAULT);

    private final LoopExchange exchange;
    private final Body body = new Body();
    private @Nullable HttpHeaders headers;

    LoopClientHttpResponse(LoopExchange exchange) {
        this.exchange = exchange;
    }

    LoopExchange exchange() {
        return exchange;
    }

    Body body() {
        return body;
    }

    @Override
    public String getId() {
        return "loop" + exchange.loopIndex() + "-" + Integer.toHexString(System.identityHashCode(exchange));
    }

    @Override
    public HttpStatusCode getStatusCode() {
        return HttpStatusCode.valueOf(exchange.status());
    }

    @Override
    public HttpHeaders getHeaders() {
        HttpHeaders h = headers;
        if (h == null) {
            h = HttpHeaders.readOnlyHttpHeaders(new Netty4HeadersAdapter(exchange.headers()));
            headers = h;
        }
        return h;
    }

    @Override
    public MultiValueMap<String, ResponseCookie> getCookies() {
        MultiValueMap<String, ResponseCookie> cookies = new LinkedMultiValueMap<>();
        for (String header : exchange.headers().getAll(HttpHeaderNames.SET_COOKIE)) {
            try {
                for (HttpCookie c : HttpCookie.parse(header)) {
                    cookies.add(c.getName(), ResponseCookie.from(c).build());
                }
            } catch (IllegalArgumentException malformed) {
                // a cookie the JDK cannot parse is left out, as a browser would
            }
        }
        return cookies;
    }

    @Override
    public Flux<DataBuffer> getBody() {
        return body;
    }

    @Override
    public String toString() {
        return "LoopClientHttpResponse[" + exchange + ", " + exchange.status() + "]";
    }

    /** The body: one subscriber, fed on the loop as far as it demands. */
    final class Body extends Flux<DataBuffer> implements Subscription {
        private final AtomicReference<@Nullable CoreSubscriber<? super DataBuffer>> subscriber =
                new AtomicReference<>();
        private final AtomicBoolean told = new AtomicBoolean(); // the end is signalled once, by end() or subscribe()
        private volatile boolean ended;
        private volatile @Nullable Throwable failure;

        @Override
        public void subscribe(CoreSubscriber<? super DataBuffer> actual) {
            if (!subscriber.compareAndSet(null, actual)) {
                Operators.error(
                        actual,
                        new IllegalStateException("the body of " + LoopClientHttpResponse.this
                                + " can be read once, and it has a subscriber already"));
                return;
            }
            actual.onSubscribe(this);
            if (ended) {
                signalEnd(actual); // it ended (failed) before anybody asked
            }
        }

        @Override
        public void request(long n) {
            if (Operators.validate(n)) {
                exchange.demand(n);
            }
        }

        @Override
        public void cancel() {
            exchange.cancel();
        }

        /** On the loop: a piece the subscriber asked for. */
        void next(ByteBuf content) {
            CoreSubscriber<? super DataBuffer> s = subscriber.get();
            if (s == null) {
                content.release(); // cannot happen: nothing is read before a subscriber asks
                return;
            }
            s.onNext(BUFFERS.wrap(content));
        }

        /** On the loop: the body ended, or failed with {@code error}. */
        void end(@Nullable Throwable error) {
            failure = error;
            ended = true;
            CoreSubscriber<? super DataBuffer> s = subscriber.get();
            if (s != null) {
                signalEnd(s);
            }
        }

        private void signalEnd(CoreSubscriber<? super DataBuffer> s) {
            if (!told.compareAndSet(false, true)) {
                return; // a failure raced with the subscription: both saw the other
            }
            Throwable f = failure;
            if (f == null) {
                s.onComplete();
            } else {
                s.onError(f);
            }
        }
    }
}
