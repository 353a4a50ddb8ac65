package io.cosched.spring.web.stream;

import java.io.InputStream;
import java.util.List;
import java.util.Map;
import org.springframework.core.ResolvableType;
import org.springframework.http.MediaType;
import org.springframework.http.ReactiveHttpInputMessage;
import org.springframework.http.codec.HttpMessageReader;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.http.server.reactive.ServerHttpResponse;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * {@code @RequestBody InputStream} (and {@code HttpEntity<InputStream>}): the body as a stream that reads from the
 * connection as it is read, on the server side only. Registered among the server's codecs ahead of Spring's own.
 */
final class InputStreamBodyReader implements HttpMessageReader<InputStream> {

    private final StreamLimits detachedLimits;

    InputStreamBodyReader(StreamLimits detachedLimits) {
        this.detachedLimits = detachedLimits;
    }

    @Override
    public List<MediaType> getReadableMediaTypes() {
        return List.of(MediaType.ALL);
    }

    @Override
    public boolean canRead(ResolvableType elementType, @org.jspecify.annotations.Nullable MediaType mediaType) {
        return elementType.resolve() == InputStream.class;
    }

    @Override
    public Mono<InputStream> readMono(
            ResolvableType actualType,
            ResolvableType elementType,
            ServerHttpRequest request,
            ServerHttpResponse response,
            Map<String, Object> hints) {
        return Mono.fromSupplier(() -> BodyStreams.body(request, response, detachedLimits));
    }

    @Override
    public Flux<InputStream> read(
            ResolvableType actualType,
            ResolvableType elementType,
            ServerHttpRequest request,
            ServerHttpResponse response,
            Map<String, Object> hints) {
        return readMono(actualType, elementType, request, response, hints).flux();
    }

    @Override
    public Mono<InputStream> readMono(
            ResolvableType elementType, ReactiveHttpInputMessage message, Map<String, Object> hints) {
        return Mono.error(new UnsupportedOperationException("an InputStream body is read on the server side only"));
    }

    @Override
    public Flux<InputStream> read(
            ResolvableType elementType, ReactiveHttpInputMessage message, Map<String, Object> hints) {
        return Mono.<InputStream>error(
                        new UnsupportedOperationException("an InputStream body is read on the server side only"))
                .flux();
    }
}
