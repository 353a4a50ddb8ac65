package io.cosched.spring.web.stream;

import io.cosched.spring.web.StreamClosedException;
import java.util.Objects;
import org.jspecify.annotations.Nullable;
import org.springframework.core.Ordered;
import org.springframework.core.codec.DecodingException;
import org.springframework.core.io.buffer.DataBufferLimitException;
import org.springframework.http.HttpStatus;
import org.springframework.web.server.ContentTooLargeException;
import org.springframework.web.server.ResponseStatusException;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.ServerWebInputException;
import org.springframework.web.server.WebExceptionHandler;
import reactor.core.publisher.Mono;

/**
 * Gives a failure of a streamed request body the status Spring gives the same failure of a {@code @RequestBody},
 * whatever the handler wrapped it in: over one of Spring's limits 413 ({@link ContentTooLargeException}), malformed
 * 400 ({@link ServerWebInputException}), a client too slow to send it 408. It passes the mapped exception on, so
 * that the application's error rendering (Spring Boot's error attributes, or problem details) answers as it answers
 * Spring's own. A stream's time limit, wrapped, is unwrapped for the request path's 503 handler, ordered after
 * this ({@link #ORDER} + 1) and ahead of Spring Boot's error handler.
 */
final class StreamErrors implements WebExceptionHandler, Ordered {

    /** Before the request path's 503s and Spring Boot's {@code ErrorWebExceptionHandler} (-1). */
    static final int ORDER = -3;

    @Override
    public Mono<Void> handle(ServerWebExchange exchange, Throwable error) {
        Throwable mapped = exchange.getResponse().isCommitted() ? null : map(error);
        return Mono.error(mapped == null ? error : mapped);
    }

    static @Nullable Throwable map(Throwable error) {
        for (Throwable t = error; t != null; t = t.getCause()) {
            if (t instanceof ResponseStatusException) {
                return null; // a status chosen already
            }
            if (t instanceof BodyReadException read) {
                Throwable cause = read.getCause();
                if (cause instanceof DataBufferLimitException) {
                    return new ContentTooLargeException(read);
                }
                if (cause instanceof DecodingException) {
                    String reason = Objects.requireNonNull(read.getMessage(), "a BodyReadException has a message");
                    return new ServerWebInputException(reason, null, read);
                }
                return null;
            }
            if (t instanceof StreamClosedException closed) {
                return switch (closed.reason()) {
                    case IDLE_TIMEOUT ->
                        new ResponseStatusException(HttpStatus.REQUEST_TIMEOUT, closed.getMessage(), closed);
                    case MAX_DURATION, REQUEST_TIMEOUT, SHUTDOWN -> closed; // unwrapped: the request path answers 503
                    case CLIENT_GONE -> null;
                };
            }
            if (t.getCause() == t) {
                break;
            }
        }
        return null;
    }

    @Override
    public int getOrder() {
        return ORDER;
    }
}
