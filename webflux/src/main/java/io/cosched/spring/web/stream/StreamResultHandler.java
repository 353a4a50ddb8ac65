package io.cosched.spring.web.stream;

import io.cosched.spring.web.EventStream;
import io.cosched.spring.web.StreamingResponseBody;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.Executor;
import org.jspecify.annotations.Nullable;
import org.springframework.core.MethodParameter;
import org.springframework.core.ReactiveAdapterRegistry;
import org.springframework.core.ResolvableType;
import org.springframework.core.codec.Hints;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.http.codec.HttpMessageWriter;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.web.reactive.HandlerMapping;
import org.springframework.web.reactive.HandlerResult;
import org.springframework.web.reactive.HandlerResultHandler;
import org.springframework.web.reactive.accept.RequestedContentTypeResolver;
import org.springframework.web.reactive.result.method.annotation.AbstractMessageWriterResultHandler;
import org.springframework.web.server.NotAcceptableStatusException;
import org.springframework.web.server.ServerWebExchange;
import reactor.core.publisher.Mono;

/**
 * Writes what a handler answered with as a stream: a {@link StreamingResponseBody} as bytes, an {@link EventStream}
 * through Spring's codecs (server-sent events, JSON lines, or what else the negotiated type is), either alone or
 * as a {@code ResponseEntity}'s body. A coroutine request has bound its stream already ({@link ResponseStreams#bind});
 * for a handler that did not run as one, the producer runs on {@code detached}, without the request's limits.
 */
final class StreamResultHandler extends AbstractMessageWriterResultHandler implements HandlerResultHandler {

    /** Ahead of Spring's {@code ResponseEntityResultHandler} (0) and {@code ResponseBodyResultHandler} (100). */
    static final int ORDER = -10;

    /** What an {@link EventStream} is written as when the mapping says nothing ({@code produces}). */
    private static final List<MediaType> STREAMING_TYPES =
            List.of(MediaType.TEXT_EVENT_STREAM, MediaType.APPLICATION_NDJSON);

    private final Executor detached;
    private final StreamLimits limits;

    StreamResultHandler(
            List<HttpMessageWriter<?>> writers,
            RequestedContentTypeResolver contentTypes,
            ReactiveAdapterRegistry adapters,
            Executor detached,
            StreamLimits limits) {
        super(writers, contentTypes, adapters);
        this.detached = detached;
        this.limits = limits;
        setOrder(ORDER);
    }

    @Override
    public boolean supports(HandlerResult result) {
        return ResponseStreams.streamBody(result.getReturnValue()) != null;
    }

    @Override
    public Mono<Void> handleResult(ServerWebExchange exchange, HandlerResult result) {
        Object value = result.getReturnValue();
        MethodParameter bodyParameter = result.getReturnTypeSource();
        ServerHttpResponse response = exchange.getResponse();
        if (value instanceof ResponseEntity<?> entity) {
            response.setStatusCode(entity.getStatusCode());
            HttpHeaders headers = entity.getHeaders();
            if (!headers.isEmpty()) {
                response.getHeaders().putAll(headers);
            }
            value = entity.getBody();
            bodyParameter = bodyParameter.nested();
        }
        Object body = Objects.requireNonNull(value);
        ResponseStream<?> bound = ResponseStreams.bound(exchange, body);
        boolean own = bound == null;
        ResponseStream<?> stream = bound != null
                ? bound
                : ResponseStreams.create(body, StreamRequest.detached(limits, response), exchange);
        Mono<Void> write;
        try {
            write = body instanceof StreamingResponseBody
                    ? writeBytes(exchange, stream)
                    : writeElements(exchange, stream, bodyParameter);
        } catch (RuntimeException notAcceptable) {
            stream.abandon();
            return Mono.error(notAcceptable);
        }
        if (own) {
            // the producer starts when Spring subscribes to the write, not before: it could not send anyway
            write = write.doOnSubscribe(subscription -> ResponseStreams.start(stream, detached));
        }
        return write;
    }

    @SuppressWarnings("unchecked")
    private Mono<Void> writeBytes(ServerWebExchange exchange, ResponseStream<?> stream) {
        ServerHttpResponse response = exchange.getResponse();
        if (response.getHeaders().getContentType() == null) {
            // the mapping's produces, negotiated with Accept; bytes of no declared type are octets
            Set<MediaType> declared = exchange.getAttribute(HandlerMapping.PRODUCIBLE_MEDIA_TYPES_ATTRIBUTE);
            MediaType type = declared == null || declared.isEmpty() ? null : selectMediaType(exchange, List::of);
            response.getHeaders()
                    .setContentType(type == null || !type.isConcrete() ? MediaType.APPLICATION_OCTET_STREAM : type);
        }
        return response.writeWith((ResponseStream<DataBuffer>) stream);
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    private Mono<Void> writeElements(
            ServerWebExchange exchange, ResponseStream<?> stream, MethodParameter bodyParameter) {
        ResolvableType elementType = ResolvableType.forMethodParameter(bodyParameter)
                .as(EventStream.class)
                .getGeneric();
        if (elementType.resolve() == null) {
            elementType = ResolvableType.forClass(Object.class);
        }
        ResolvableType type = elementType;
        MediaType best = selectMediaType(
                exchange,
                () -> STREAMING_TYPES.stream()
                        .filter(media -> writerFor(type, media) != null)
                        .toList());
        HttpMessageWriter<?> writer = best == null ? null : writerFor(type, best);
        if (writer == null) {
            throw new NotAcceptableStatusException(STREAMING_TYPES);
        }
        return ((HttpMessageWriter) writer)
                .write(
                        stream,
                        type,
                        type,
                        best,
                        exchange.getRequest(),
                        exchange.getResponse(),
                        Hints.from(Hints.LOG_PREFIX_HINT, exchange.getLogPrefix()));
    }

    private @Nullable HttpMessageWriter<?> writerFor(ResolvableType elementType, MediaType type) {
        for (HttpMessageWriter<?> writer : getMessageWriters()) {
            if (writer.canWrite(elementType, type)) {
                return writer;
            }
        }
        return null;
    }
}
