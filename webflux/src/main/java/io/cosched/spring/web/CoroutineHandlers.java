package io.cosched.spring.web;

import java.util.concurrent.Callable;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.web.reactive.function.server.HandlerFilterFunction;
import org.springframework.web.reactive.function.server.HandlerFunction;
import org.springframework.web.reactive.function.server.ServerRequest;
import org.springframework.web.reactive.function.server.ServerResponse;
import org.springframework.web.reactive.socket.WebSocketHandler;
import org.springframework.web.server.ServerWebExchange;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

/**
 * Runs blocking functional endpoints as coroutines, with the same request timeout, load shedding,
 * cancellation and context propagation as annotated handlers. Inject the bean cosched declares:
 *
 * <pre>{@code
 * @Bean
 * RouterFunction<ServerResponse> routes(CoroutineHandlers coroutines, OrderRepository orders) {
 *     return route()
 *         .GET("/orders/{id}", coroutines.blocking(req -> ok().bodyValue(orders.find(req.pathVariable("id")))))
 *         .build();
 * }
 * }</pre>
 */
public final class CoroutineHandlers {

    /** A handler written in blocking style: it may block, it runs as a coroutine. */
    @FunctionalInterface
    public interface BlockingHandler<T extends ServerResponse> {
        /**
         * Handles the request, blocking as needed, and returns the response the way the
         * {@code ServerResponse} builders make it, e.g. {@code ok().bodyValue(result)}.
         */
        Mono<T> handle(ServerRequest request) throws Exception;
    }

    /**
     * How a blocking call runs: cosched's {@code CoroutineRequests} runs it as a coroutine request of
     * the exchange; without cosched's handlers, a Reactor scheduler runs it.
     */
    public interface Runner {
        /** Calls {@code call} (which may block) for the request of {@code exchange}; the publisher it returns is the answer. */
        <T> Mono<T> call(ServerWebExchange exchange, Callable<? extends Mono<T>> call);

        /**
         * The publisher of a streamed answer ({@link StreamingResponseBody} or {@link EventStream}) for the request
         * of {@code exchange}: produced in the request's coroutine once the handler has returned, when it is one.
         */
        default Publisher<?> stream(ServerWebExchange exchange, Object streamedAnswer) {
            throw new UnsupportedOperationException("streamed bodies need cosched's streaming support (the starter "
                    + "wires it: a CoroutineHandlers bean made from cosched's CoroutineRequests or StreamingSupport)");
        }

        /** A Spring {@code WebSocketHandler} that serves each connection with {@code handler}. */
        default WebSocketHandler webSocket(BlockingWebSocketHandler handler) {
            throw new UnsupportedOperationException("blocking WebSocket handlers need cosched's streaming support (the"
                    + " starter wires it: a CoroutineHandlers bean made from cosched's CoroutineRequests or"
                    + " StreamingSupport)");
        }
    }

    /** A runner that calls blocking handlers on {@code scheduler}; it makes no streamed bodies. */
    public static Runner onScheduler(Scheduler scheduler) {
        return new Runner() {
            @Override
            public <T> Mono<T> call(ServerWebExchange exchange, Callable<? extends Mono<T>> call) {
                return Mono.fromCallable(call).flatMap(response -> response).subscribeOn(scheduler);
            }
        };
    }

    private final Runner runner;

    /** Handlers run by {@code runner}: cosched's {@code CoroutineRequests} bean, as coroutine requests. */
    public CoroutineHandlers(Runner runner) {
        this.runner = runner;
    }

    /** Handlers run on {@code scheduler}, without streamed bodies ({@link #events}, {@link #bytes}). */
    public CoroutineHandlers(Scheduler scheduler) {
        this.runner = onScheduler(scheduler);
    }

    /**
     * A handler function that calls {@code handler} in a coroutine. {@code handler} may block
     * (JDBC, blocking HTTP clients, sleeps) before it returns the response publisher, which is
     * usually a {@code ServerResponse} builder's {@code bodyValue(..)}.
     */
    public <T extends ServerResponse> HandlerFunction<T> blocking(BlockingHandler<T> handler) {
        return new Blocking<>(runner, handler);
    }

    /**
     * The runner of a handler function made by {@link #blocking}, or null for any other function:
     * how cosched tells, from an application's router functions, which routes run as coroutines.
     */
    public static @Nullable Runner runnerOf(HandlerFunction<?> function) {
        return function instanceof Blocking<?> blocking ? blocking.runner : null;
    }

    private record Blocking<T extends ServerResponse>(Runner runner, BlockingHandler<T> handler)
            implements HandlerFunction<T> {
        @Override
        public Mono<T> handle(ServerRequest request) {
            return runner.call(request.exchange(), () -> handler.handle(request));
        }
    }

    /**
     * A response body of elements sent by blocking code, for a handler made by {@link #blocking}: {@code producer}
     * runs in the request's coroutine once the handler has returned, as an annotated handler's {@link EventStream}
     * does, and its elements are encoded for the response's content type (server-sent events, JSON lines):
     *
     * <pre>{@code
     * .GET("/prices", coroutines.blocking(request -> ok().contentType(MediaType.TEXT_EVENT_STREAM)
     *         .body(coroutines.events(request, events -> { while (true) events.send(prices.next()); }), Price.class)))
     * }</pre>
     *
     * One streamed body per request.
     */
    @SuppressWarnings("unchecked")
    public <T> Publisher<T> events(ServerRequest request, EventStream<T> producer) {
        return (Publisher<T>) runner.stream(request.exchange(), producer);
    }

    /**
     * A response body of bytes written by blocking code, for a handler made by {@link #blocking}:
     * {@code ok().body(BodyInserters.fromDataBuffers(coroutines.bytes(request, out -> ...)))}. {@code body} runs in
     * the request's coroutine once the handler has returned, as an annotated handler's {@link StreamingResponseBody}
     * does. One streamed body per request.
     */
    @SuppressWarnings("unchecked")
    public Publisher<DataBuffer> bytes(ServerRequest request, StreamingResponseBody body) {
        return (Publisher<DataBuffer>) runner.stream(request.exchange(), body);
    }

    /**
     * A Spring {@code WebSocketHandler} whose connections {@code handler} serves in blocking style: each as a
     * coroutine on the connection's loop, with the handshake's context (see {@link BlockingWebSocketHandler}). Map it
     * as any {@code WebSocketHandler}, with a {@code SimpleUrlHandlerMapping}.
     */
    public WebSocketHandler webSocket(BlockingWebSocketHandler handler) {
        return runner.webSocket(handler);
    }

    /**
     * A filter that runs the rest of the chain (later filters and the handler function) in a
     * coroutine: {@code route().GET("/x", blockingHandler).filter(coroutines.filter())}.
     */
    public <T extends ServerResponse> HandlerFilterFunction<T, T> filter() {
        return (request, next) -> runner.call(request.exchange(), () -> next.handle(request));
    }
}
