package io.cosched.spring.web.server;

import io.cosched.spring.web.MultipartStream;
import java.io.InputStream;
import java.util.List;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.springframework.core.MethodParameter;
import org.springframework.http.codec.HttpMessageReader;
import org.springframework.http.codec.multipart.PartEventHttpMessageReader;
import org.springframework.web.reactive.BindingContext;
import org.springframework.web.reactive.result.method.HandlerMethodArgumentResolver;
import org.springframework.web.server.ServerWebExchange;
import reactor.core.publisher.Mono;

/**
 * Handler arguments of type {@link InputStream} (the request body, as Spring MVC gives it) and
 * {@link MultipartStream} (its parts as they arrive). {@code @RequestBody InputStream} goes through Spring's
 * body resolver to {@link InputStreamBodyReader} instead.
 */
final class StreamArguments implements HandlerMethodArgumentResolver {

    private final Supplier<List<HttpMessageReader<?>>> readers;
    private final StreamLimits detachedLimits;
    private volatile @Nullable PartEventHttpMessageReader parts;

    StreamArguments(Supplier<List<HttpMessageReader<?>>> readers, StreamLimits detachedLimits) {
        this.readers = readers;
        this.detachedLimits = detachedLimits;
    }

    @Override
    public boolean supportsParameter(MethodParameter parameter) {
        Class<?> type = parameter.getParameterType();
        return type == InputStream.class || type == MultipartStream.class;
    }

    @Override
    public Mono<Object> resolveArgument(
            MethodParameter parameter, BindingContext bindingContext, ServerWebExchange exchange) {
        return Mono.fromSupplier(() -> parameter.getParameterType() == InputStream.class
                ? BodyStreams.body(exchange.getRequest(), exchange.getResponse(), detachedLimits)
                : BodyStreams.parts(exchange.getRequest(), exchange.getResponse(), partReader(), detachedLimits));
    }

    /** The server's streaming multipart reader, with Spring Boot's {@code spring.webflux.multipart.*} limits. */
    private PartEventHttpMessageReader partReader() {
        PartEventHttpMessageReader r = parts;
        if (r == null) {
            for (HttpMessageReader<?> reader : readers.get()) {
                if (reader instanceof PartEventHttpMessageReader p) {
                    r = p;
                    break;
                }
            }
            parts = r = r != null ? r : new PartEventHttpMessageReader();
        }
        return r;
    }
}
