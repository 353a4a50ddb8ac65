package io.cosched.spring.web.server;

import io.cosched.spring.web.stream.RequestStreams;
import java.security.Principal;
import org.jspecify.annotations.Nullable;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferLimitException;
import org.springframework.http.codec.multipart.Part;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.http.server.reactive.ServerHttpRequestDecorator;
import org.springframework.util.MultiValueMap;
import org.springframework.web.server.ContentTooLargeException;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.ServerWebExchangeDecorator;
import org.springframework.web.server.WebSession;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * The exchange a coroutine handler's arguments are resolved from: what Spring may have to wait for
 * before it can invoke the handler (the request body, form and multipart data, the session, the
 * principal) is delivered into the request's coroutine. Spring invokes a handler on the thread that
 * completed its last argument; this way that thread is the coroutine, not the loop that read the bytes.
 * A body read as a stream reads from the connection itself instead ({@link RequestStreams.BodySource}).
 *
 * <p>Form and multipart data over one of Spring's limits fail with Spring's {@link ContentTooLargeException}
 * (413), as a {@code @RequestBody} over its limit does, rather than a bare {@code DataBufferLimitException} (500).
 */
final class CoroutineExchange extends ServerWebExchangeDecorator {

    private final InFlightRequest<?> inFlight; // the request, whose coroutine takes what is delivered
    // made when first asked for, as most requests read no body, form or session (a race only makes an equal one twice)
    private @Nullable Scheduler into;
    private @Nullable CoroutineRequest request;

    CoroutineExchange(ServerWebExchange exchange, InFlightRequest<?> inFlight) {
        super(exchange);
        this.inFlight = inFlight;
    }

    @Override
    public ServerHttpRequest getRequest() {
        CoroutineRequest r = request;
        if (r == null) {
            request = r = new CoroutineRequest(getDelegate().getRequest());
        }
        return r;
    }

    @Override
    public Mono<WebSession> getSession() {
        return super.getSession().publishOn(into());
    }

    @Override
    public <T extends Principal> Mono<T> getPrincipal() {
        return super.<T>getPrincipal().publishOn(into());
    }

    @Override
    public Mono<MultiValueMap<String, String>> getFormData() {
        return super.getFormData()
                .onErrorMap(DataBufferLimitException.class, ContentTooLargeException::new)
                .publishOn(into());
    }

    @Override
    public Mono<MultiValueMap<String, Part>> getMultipartData() {
        return super.getMultipartData()
                .onErrorMap(DataBufferLimitException.class, ContentTooLargeException::new)
                .publishOn(into());
    }

    private Scheduler into() {
        Scheduler s = into;
        if (s == null) {
            into = s = Schedulers.fromExecutor(inFlight);
        }
        return s;
    }

    /**
     * The request as a coroutine handler sees it: its body delivered into the coroutine, or, read as a stream, from
     * the connection.
     */
    final class CoroutineRequest extends ServerHttpRequestDecorator implements RequestStreams.BodySource {

        CoroutineRequest(ServerHttpRequest delegate) {
            super(delegate);
        }

        @Override
        public Flux<DataBuffer> getBody() {
            return super.getBody().publishOn(into());
        }

        @Override
        public ServerHttpRequest fromConnection() {
            return getDelegate();
        }

        @Override
        public RequestStreams streams() {
            return inFlight.streams();
        }
    }
}
