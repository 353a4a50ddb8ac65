package io.cosched.spring.http.client.reactive;

import io.cosched.IOManager;
import io.cosched.http.client.ExchangeHandler;
import io.cosched.http.client.LoopExchange;
import io.cosched.http.client.LoopHttpClient;
import io.netty.buffer.ByteBuf;
import java.io.IOException;
import java.net.URI;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.http.HttpMethod;
import org.springframework.http.client.reactive.ClientHttpConnector;
import org.springframework.http.client.reactive.ClientHttpRequest;
import org.springframework.http.client.reactive.ClientHttpResponse;
import reactor.core.CoreSubscriber;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Operators;

/**
 * A {@code WebClient} connector whose calls from coroutines go over {@link LoopHttpClient}: the
 * request is sent, and its answer read, on the calling coroutine's own event loop, with none of
 * Reactor Netty's client in between, so a coroutine blocking on the call ({@code .block()}) is resumed
 * by its loop for the least work. Every other caller, a reactive chain subscribed on a loop thread or
 * any plain thread, goes to the connector it wraps (Spring Boot's Reactor Netty connector), which
 * keeps its behaviour and cost; so does a request whose body is streamed (not a single buffer).
 *
 * <p>The decision is made when the call is subscribed: {@code Mono.zip} of two calls in a coroutine
 * sends both at once, each on the coroutine's loop. The answer's body is read as it is demanded; a
 * subscriber that cancels leaves the rest to the loop, which reads it to its end and keeps the
 * connection.
 */
public final class LoopClientHttpConnector implements ClientHttpConnector, AutoCloseable {

    private final LoopHttpClient client;
    private final ClientHttpConnector fallback;
    private final IOManager ioManager;

    /**
     * @param client   the client coroutines' calls go over
     * @param fallback the connector every other call goes to
     */
    public LoopClientHttpConnector(LoopHttpClient client, ClientHttpConnector fallback) {
        this.client = client;
        this.fallback = fallback;
        this.ioManager = client.ioManager();
    }

    /** The client coroutines' calls go over. */
    public LoopHttpClient client() {
        return client;
    }

    /** The connector every other call goes to. */
    public ClientHttpConnector fallback() {
        return fallback;
    }

    @Override
    public Mono<ClientHttpResponse> connect(
            HttpMethod method, URI uri, Function<? super ClientHttpRequest, Mono<Void>> requestCallback) {
        return new Connect(method, uri, requestCallback);
    }

    /** The home loop of the calling coroutine (or of a virtual thread one started); -1 for a loop thread or any other thread. */
    private int coroutineLoop() {
        int loopIndex = ioManager.currentLoopIndex();
        return loopIndex >= 0 && !ioManager.eventLoop(loopIndex).inEventLoop() ? loopIndex : -1;
    }

    /**
     * Closes the loop client's idle connections; coroutines' calls fail from then on. The connector it
     * wraps is left alone: its resources are whoever made it's (Spring Boot's {@code ReactorResourceFactory}).
     * Spring calls it when the application context closes, if the connector is a bean.
     */
    @Override
    public void close() {
        client.close();
    }

    @Override
    public String toString() {
        return "LoopClientHttpConnector[" + client.settingsDescription() + ", otherwise " + fallback + "]";
    }

    /** One call, decided when it is subscribed. */
    private final class Connect extends Mono<ClientHttpResponse> {
        private final HttpMethod method;
        private final URI uri;
        private final Function<? super ClientHttpRequest, Mono<Void>> requestCallback;

        Connect(HttpMethod method, URI uri, Function<? super ClientHttpRequest, Mono<Void>> requestCallback) {
            this.method = method;
            this.uri = uri;
            this.requestCallback = requestCallback;
        }

        @Override
        public void subscribe(CoreSubscriber<? super ClientHttpResponse> actual) {
            int loopIndex = coroutineLoop();
            if (loopIndex < 0) {
                fallback.connect(method, uri, requestCallback).subscribe(actual);
                return;
            }
            Call call = new Call(actual, method, uri, loopIndex);
            actual.onSubscribe(call);
            LoopClientHttpRequest request = LoopClientHttpRequest.of(method, uri, call);
            Mono<Void> written;
            try {
                written = requestCallback.apply(request);
            } catch (Throwable t) {
                call.failed(t);
                return;
            }
            written.subscribe(null, call::failed);
        }
    }

    /**
     * The response side of one call: a {@code Mono} subscription completed with the answer's head, and
     * the handler of the exchange, whose body goes on to the response's body subscriber.
     */
    final class Call extends Operators.MonoSubscriber<ClientHttpResponse, ClientHttpResponse> {
        private final HttpMethod method;
        private final URI uri;
        private final int loopIndex;
        private volatile @Nullable LoopExchange exchange;
        private volatile @Nullable Disposable handedOver; // the wrapped connector's call, if it has one
        private volatile boolean responded;
        private @Nullable LoopClientHttpResponse response; // confined to the loop

        Call(CoreSubscriber<? super ClientHttpResponse> actual, HttpMethod method, URI uri, int loopIndex) {
            super(actual);
            this.method = method;
            this.uri = uri;
            this.loopIndex = loopIndex;
        }

        /** The request is written: it goes out on the calling coroutine's loop. */
        void send(io.netty.handler.codec.http.HttpHeaders headers, byte[] body) {
            if (isCancelled()) {
                return;
            }
            LoopExchange e;
            try {
                e = client.start(
                        loopIndex,
                        io.netty.handler.codec.http.HttpMethod.valueOf(method.name()),
                        uri,
                        headers,
                        body,
                        handler);
            } catch (IOException | RuntimeException failure) {
                failed(failure);
                return;
            }
            exchange = e;
            if (isCancelled() && !responded) {
                e.cancel();
            }
        }

        /** A streamed body: the whole call goes to the wrapped connector, with this request's headers and attributes. */
        Mono<Void> handOver(LoopClientHttpRequest written, Function<ClientHttpRequest, Mono<Void>> write) {
            return Mono.defer(() -> {
                Disposable call = fallback.connect(method, uri, r -> {
                            written.getHeaders()
                                    .forEach((name, values) -> r.getHeaders().put(name, values));
                            r.getAttributes().putAll(written.getAttributes());
                            return write.apply(r);
                        })
                        .contextWrite(currentContext()) // the subscriber's context, as if it had subscribed itself
                        .subscribe(this::complete, this::failed);
                handedOver = call;
                if (isCancelled()) {
                    call.dispose(); // cancelled while it was being handed over
                }
                return Mono.empty();
            });
        }

        void failed(Throwable t) {
            if (!isCancelled()) {
                actual.onError(t);
            }
        }

        @Override
        public void cancel() {
            super.cancel();
            LoopExchange e = exchange;
            if (e != null && !responded) {
                e.cancel(); // once answered, the answer is given to the subscriber, or discarded (below)
            }
            Disposable other = handedOver;
            if (other != null) {
                other.dispose();
            }
        }

        /** An answer the subscriber no longer wanted: its exchange is given up, its connection kept. */
        @Override
        protected void discard(@Nullable ClientHttpResponse r) {
            if (r instanceof LoopClientHttpResponse loopResponse) {
                loopResponse.exchange().cancel();
            } else if (r != null) {
                r.getBody().subscribe(DataBufferUtils::release); // the wrapped connector's answer: read and let go
            }
        }

        private final ExchangeHandler handler = new ExchangeHandler() {
            @Override
            public void onResponse(LoopExchange e) {
                LoopClientHttpResponse r = new LoopClientHttpResponse(e);
                response = r;
                responded = true;
                complete(r);
            }

            @Override
            public void onContent(ByteBuf content) {
                LoopClientHttpResponse r = response;
                if (r != null) {
                    r.body().next(content);
                } else {
                    content.release();
                }
            }

            @Override
            public void onEnd() {
                LoopClientHttpResponse r = response;
                if (r != null) {
                    r.body().end(null);
                }
            }

            @Override
            public void onError(IOException error) {
                LoopClientHttpResponse r = response;
                if (r != null) {
                    r.body().end(error);
                } else {
                    failed(error);
                }
            }
        };

        @Override
        public String toString() {
            return "LoopClientHttpConnector.Call[" + method + " " + uri + ", loop " + loopIndex + "]";
        }
    }
}
