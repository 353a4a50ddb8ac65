package io.cosched.spring.web.stream;

import io.cosched.Internal;
import io.cosched.TimerManager;
import io.cosched.spring.web.BlockingWebSocketHandler;
import io.cosched.spring.web.CoroutineHandlers;
import io.cosched.spring.web.EventStream;
import io.cosched.spring.web.MultipartStream;
import io.cosched.spring.web.StreamingResponseBody;
import io.cosched.spring.web.context.ContextRestorer;
import java.io.InputStream;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.Executor;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import org.springframework.core.ReactiveAdapterRegistry;
import org.springframework.http.codec.HttpMessageReader;
import org.springframework.http.codec.ServerCodecConfigurer;
import org.springframework.web.reactive.HandlerResult;
import org.springframework.web.reactive.HandlerResultHandler;
import org.springframework.web.reactive.accept.RequestedContentTypeResolver;
import org.springframework.web.reactive.result.method.HandlerMethodArgumentResolver;
import org.springframework.web.reactive.socket.WebSocketHandler;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebExceptionHandler;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

/**
 * Streaming in blocking style for annotated handlers: {@link InputStream} and {@link MultipartStream} arguments,
 * {@code @RequestBody InputStream}, and {@link StreamingResponseBody} and {@link EventStream} answers, with their
 * errors answered as Spring answers a {@code @RequestBody}'s. In a coroutine request they are bound to the request
 * (its coroutine, context, timeout and stream time limits); elsewhere (cosched's handlers off, an application's own
 * adapter) they still work, detached: a streamed answer is produced on {@code detached}, and a body is read on
 * whatever thread the handler runs on, except the connection's own event loop.
 *
 * <p>Public for the starter's wiring, not an API: Spring Boot applications get it from the starter. Without
 * Spring Boot: the resolver through {@code WebFluxConfigurer.configureArgumentResolvers}, the reader through
 * {@code configureHttpMessageCodecs} (a custom codec), the result handler and the exception handler as beans.
 *
 * <p>The one door of the stream package: the wiring makes the instance; the request path calls the static methods,
 * with its request's {@link RequestStreams}.
 */
@Internal
public final class StreamingSupport {

    /** The order of the {@link #exceptionHandler}: ahead of the request path's 503s, which come next. */
    public static final int ERRORS_ORDER = StreamErrors.ORDER;

    private final StreamLimits limits;
    private final Executor detached;
    private final MultipartLimits multipart;

    /**
     * With Spring's default multipart limits.
     *
     * @param limits   the stream's time limits; without a coroutine request only the read and write timeouts apply
     * @param detached where the answer of a handler that did not run as a coroutine request is produced
     */
    public StreamingSupport(StreamLimits limits, Executor detached) {
        this(limits, detached, MultipartLimits.springDefaults());
    }

    /**
     * @param limits    the stream's time limits; without a coroutine request only the read and write timeouts apply
     * @param detached  where the answer of a handler that did not run as a coroutine request is produced
     * @param multipart the limits of a {@code MultipartStream} (Spring Boot's {@code spring.webflux.multipart.*})
     */
    public StreamingSupport(StreamLimits limits, Executor detached, MultipartLimits multipart) {
        this.limits = limits;
        this.detached = detached;
        this.multipart = multipart;
    }

    /** {@code InputStream} and {@code MultipartStream} handler arguments; {@code readers}: the server's codecs, asked once. */
    public HandlerMethodArgumentResolver argumentResolver(Supplier<List<HttpMessageReader<?>>> readers) {
        return new StreamArguments(readers, limits, multipart);
    }

    /** {@code @RequestBody InputStream}: register among the server's custom codecs, ahead of Spring's. */
    public HttpMessageReader<InputStream> bodyReader() {
        return new InputStreamBodyReader(limits);
    }

    /** Writes {@code StreamingResponseBody} and {@code EventStream} answers; ordered ahead of Spring's result handlers. */
    public HandlerResultHandler resultHandler(
            ServerCodecConfigurer codecs, RequestedContentTypeResolver contentTypes, ReactiveAdapterRegistry adapters) {
        return new StreamResultHandler(codecs.getWriters(), contentTypes, adapters, detached, limits);
    }

    /** Answers a streamed body over a limit 413, malformed 400, sent too slowly 408, as Spring answers a {@code @RequestBody}'s. */
    public WebExceptionHandler exceptionHandler() {
        return new StreamErrors();
    }

    /**
     * For the {@link CoroutineHandlers} helper without coroutine requests: blocking handler functions called on
     * {@code scheduler}, their streamed bodies produced on {@link #StreamingSupport this support's} executor.
     */
    public CoroutineHandlers.Runner runnerOn(Scheduler scheduler) {
        CoroutineHandlers.Runner calls = CoroutineHandlers.onScheduler(scheduler);
        return new CoroutineHandlers.Runner() {
            @Override
            public <T> Mono<T> call(ServerWebExchange exchange, Callable<? extends Mono<T>> call) {
                return calls.call(exchange, call);
            }

            @Override
            public Publisher<?> stream(ServerWebExchange exchange, Object streamedAnswer) {
                return detached(streamedAnswer, exchange, detached, limits);
            }

            @Override
            public WebSocketHandler webSocket(BlockingWebSocketHandler handler) {
                return WebSocketConversation.adapter(handler, detached, limits, null, ContextRestorer.detect(), null);
            }
        };
    }

    /**
     * Binds an annotated handler's streamed answer to its coroutine request, to be produced in the request's coroutine
     * once the outcome has gone to Spring; any other result passes. Called in the coroutine, with the handler's result
     * and the exchange it was handed (the request's, whose request leads to its streams).
     */
    public static HandlerResult bind(HandlerResult result, ServerWebExchange exchange) {
        return ResponseStreams.bind(result, exchange);
    }

    /**
     * A functional handler's streamed answer: produced in its request's coroutine when the handler runs as a coroutine
     * request, else detached, on {@code producers}, with the read and write limits of {@code limits} only.
     */
    public static Publisher<?> respond(
            Object streamedAnswer, ServerWebExchange exchange, Executor producers, StreamLimits limits) {
        RequestStreams request = RequestStreams.of(exchange);
        if (request == null) {
            return detached(streamedAnswer, exchange, producers, limits);
        }
        ResponseStream<?> stream = ResponseStreams.create(streamedAnswer, request, exchange);
        request.respondWith(stream); // registered on the exchange as the functional request started
        return stream;
    }

    /**
     * A Spring handler that serves each WebSocket connection with {@code handler} in a task of {@code starter} (a
     * coroutine on the connection's loop), with the handshake's context, its outbound stream among {@code open} while
     * it runs.
     */
    public static WebSocketHandler webSocket(
            BlockingWebSocketHandler handler,
            Executor starter,
            StreamLimits limits,
            TimerManager timers,
            ContextRestorer restorer,
            OpenStreams open) {
        return WebSocketConversation.adapter(handler, starter, limits, timers, restorer, open);
    }

    /**
     * A streamed body's failure as Spring's own for a {@code @RequestBody} (413, 400, 408), or null when it is none
     * (or has its status already).
     */
    public static @Nullable Throwable springError(Throwable error) {
        return StreamErrors.map(error);
    }

    /**
     * A streamed answer ({@code StreamingResponseBody}, {@code EventStream}) of no coroutine request, produced on
     * {@code producers} once subscribed to, with the read and write limits of {@code limits} only.
     */
    private static Publisher<?> detached(
            Object streamedAnswer, ServerWebExchange exchange, Executor producers, StreamLimits limits) {
        ResponseStream<?> stream = ResponseStreams.create(
                streamedAnswer, StreamRequest.detached(limits, exchange.getResponse()), exchange);
        return Flux.from(stream).doOnSubscribe(s -> ResponseStreams.start(stream, producers));
    }
}
