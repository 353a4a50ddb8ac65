package io.cosched.spring.web.server;

import io.cosched.spring.web.stream.StreamingSupport;
import org.springframework.web.method.HandlerMethod;
import org.springframework.web.reactive.HandlerResult;
import org.springframework.web.reactive.result.method.annotation.RequestMappingHandlerAdapter;
import org.springframework.web.server.ServerWebExchange;
import reactor.core.publisher.Mono;

/**
 * Spring's adapter for annotated handlers, which runs each handler the {@link CoroutineHandlerSelector}
 * picks as one {@link InFlightRequest}: arguments, validation, the method and its exception handlers in
 * the coroutine, the response written afterwards by the loop. A streamed answer is bound to the request
 * there, to be produced in the same coroutine. Every other handler is Spring's as before.
 */
final class CoroutineHandlerAdapter extends RequestMappingHandlerAdapter {

    private final CoroutineRequests requests;

    CoroutineHandlerAdapter(CoroutineRequests requests) {
        this.requests = requests;
    }

    @Override
    public Mono<HandlerResult> handle(ServerWebExchange exchange, Object handler) {
        if (handler instanceof HandlerMethod method && requests.selector().test(method)) {
            return requests.serve(exchange, request -> {
                CoroutineExchange ours = new CoroutineExchange(exchange, request);
                return super.handle(ours, handler).map(result -> StreamingSupport.bind(result, ours));
            });
        }
        return super.handle(exchange, handler);
    }

    /** cosched's own 503s are the server's answer, not the application's errors: no exception handler sees them. */
    @Override
    public Mono<HandlerResult> handleError(ServerWebExchange exchange, Throwable ex) {
        if (UnavailableResponses.handles(ex)) {
            return Mono.error(ex);
        }
        return super.handleError(exchange, ex);
    }
}
