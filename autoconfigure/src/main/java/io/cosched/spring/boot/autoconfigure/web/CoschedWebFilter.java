package io.cosched.spring.boot.autoconfigure.web;

import io.cosched.spring.web.CoschedWebStats;
import org.jspecify.annotations.Nullable;
import org.springframework.core.Ordered;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;
import reactor.core.publisher.Mono;

import java.nio.charset.StandardCharsets;
import java.time.Duration;

/**
 * Gives every request a {@link RequestScope} in its Reactor context, so that the coroutine executor
 * can find it, and answers for cosched when a coroutine request times out or is shed: 503 Service
 * Unavailable with a problem-detail body, plus {@code Retry-After: 1} when shed.
 */
final class CoschedWebFilter implements WebFilter, Ordered {

    /** Late in the chain: the closer to the handler, the likelier the hand-off happens while it is subscribed. */
    static final int ORDER = Ordered.LOWEST_PRECEDENCE - 1000;

    /** Signals a timeout through the chain; never seen outside this filter. */
    private static final class TimedOut extends RuntimeException {
        private static final long serialVersionUID = 1L;

        TimedOut() {
            super("cosched request timeout", null, false, false);
        }
    }

    private static final TimedOut TIMED_OUT = new TimedOut();

    private final CoschedWebStats stats;
    private final @Nullable Duration timeout;

    CoschedWebFilter(CoschedWebStats stats, @Nullable Duration timeout) {
        this.stats = stats;
        this.timeout = timeout;
    }

    @Override
    public int getOrder() {
        return ORDER;
    }

    @Override
    public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
        RequestScope scope = new RequestScope(stats, timeout != null);
        Mono<Void> handling = chain.filter(exchange).contextWrite(context -> context.put(RequestScope.KEY, scope));
        if (timeout != null) {
            // the first to signal wins; a timeout cancels the handling (its coroutine is interrupted by the scope)
            handling = Mono.firstWithSignal(handling, scope.onTimeout().then(Mono.error(TIMED_OUT)));
        }
        return handling
                .onErrorResume(error -> {
                    if (error == TIMED_OUT) {
                        return unavailable(exchange, error, "request timed out after " + timeout
                                + " (cosched.web.request-timeout)", false);
                    }
                    if (isShed(error)) {
                        return unavailable(exchange, error, "too many requests in flight (cosched.web.max-in-flight)", true);
                    }
                    return Mono.error(error);
                })
                .doFinally(signal -> scope.finish());
    }

    private static boolean isShed(Throwable error) {
        for (Throwable e = error; e != null; e = e.getCause()) {
            if (e instanceof CoroutineRejectedException) {
                return true;
            }
        }
        return false;
    }

    private static Mono<Void> unavailable(ServerWebExchange exchange, Throwable error, String detail, boolean retryAfter) {
        ServerHttpResponse response = exchange.getResponse();
        if (response.isCommitted()) {
            return Mono.error(error); // too late for a status: let the connection end
        }
        response.setStatusCode(HttpStatus.SERVICE_UNAVAILABLE);
        HttpHeaders headers = response.getHeaders();
        headers.setContentType(MediaType.APPLICATION_PROBLEM_JSON);
        if (retryAfter) {
            headers.set(HttpHeaders.RETRY_AFTER, "1");
        }
        byte[] body = ("{\"type\":\"about:blank\",\"title\":\"Service Unavailable\",\"status\":503,\"detail\":\""
                + detail + "\"}").getBytes(StandardCharsets.UTF_8);
        headers.setContentLength(body.length);
        return response.writeWith(Mono.just(response.bufferFactory().wrap(body)));
    }
}
