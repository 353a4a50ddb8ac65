package io.cosched.spring.web.stream;

import io.cosched.spring.web.MultipartStream;
import java.io.InputStream;
import java.util.List;
import java.util.function.Supplier;
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
    private final MultipartLimits multipart;
    private volatile int maxInMemorySize = UNKNOWN;
    private static final int UNKNOWN = Integer.MIN_VALUE;

    StreamArguments(
            Supplier<List<HttpMessageReader<?>>> readers, StreamLimits detachedLimits, MultipartLimits multipart) {
        this.readers = readers;
        this.detachedLimits = detachedLimits;
        this.multipart = multipart;
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
                : BodyStreams.parts(
                        exchange.getRequest(), exchange.getResponse(), multipart, formLimit(), detachedLimits));
    }

    /**
     * A form field's limit as the server's streaming multipart reader has it ({@code spring.webflux.multipart
     * .max-in-memory-size}, or {@code spring.codec.max-in-memory-size}); Spring's default without one.
     */
    private int formLimit() {
        int max = maxInMemorySize;
        if (max == UNKNOWN) {
            PartEventHttpMessageReader found = null;
            for (HttpMessageReader<?> reader : readers.get()) {
                if (reader instanceof PartEventHttpMessageReader p) {
                    found = p;
                    break;
                }
            }
            maxInMemorySize = max = (found != null ? found : new PartEventHttpMessageReader()).getMaxInMemorySize();
        }
        return max;
    }
}
