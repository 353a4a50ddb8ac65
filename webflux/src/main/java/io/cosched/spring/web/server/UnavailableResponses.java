package io.cosched.spring.web.server;

import io.cosched.spring.web.StreamClosedException;
import io.cosched.spring.web.StreamClosedException.Reason;
import io.cosched.spring.web.stream.StreamingSupport;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.IntSupplier;
import org.jspecify.annotations.Nullable;
import org.springframework.core.Ordered;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebExceptionHandler;
import reactor.core.publisher.Mono;

/**
 * Answers a coroutine request that timed out or was shed: 503 Service Unavailable with a
 * problem-detail body, plus {@code Retry-After} when shed (1 s, or drawn from 1 s to
 * {@code cosched.web.retry-after-max}; 429 Too Many Requests instead of 503 where {@code cosched.web.admission.status}
 * says so); a timed-out one with 504 Gateway Timeout
 * instead where so configured ({@code cosched.web.request-timeout-status}). A streamed request that ran past its time
 * limit while nothing had been sent yet is answered the same way, and one the server's shutdown ended before it sent
 * anything with 503 and {@code Retry-After}. So is a request whose handler was
 * refused work for want of capacity and let the refusal out, a {@link RejectedExecutionException}: Spring's
 * {@code InvocationRejectedException} from {@code @ConcurrencyLimit(policy = REJECT)}, a full executor. Ordered
 * ahead of Spring Boot's error handler, which would answer 500; the application's own exception handlers see
 * those refusals first.
 */
final class UnavailableResponses implements WebExceptionHandler, Ordered {

    /**
     * Before Spring Boot's {@code ErrorWebExceptionHandler} (-1) and WebFlux's status handler (0), after the stream
     * errors' handler, which unwraps a stream's time limit for this one.
     */
    static final int ORDER = StreamingSupport.ERRORS_ORDER + 1;

    private final HttpStatus timeoutStatus;
    private final HttpStatus shedStatus;
    private final IntSupplier retryAfterSeconds;

    UnavailableResponses(HttpStatus timeoutStatus, HttpStatus shedStatus, IntSupplier retryAfterSeconds) {
        this.timeoutStatus = timeoutStatus;
        this.shedStatus = shedStatus;
        this.retryAfterSeconds = retryAfterSeconds;
    }

    static boolean handles(Throwable error) {
        return error instanceof RequestTimeoutException
                || error instanceof CoroutineRejectedException
                || error instanceof StreamClosedException closed
                        && (closed.reason() == Reason.MAX_DURATION
                                || closed.reason() == Reason.REQUEST_TIMEOUT
                                || closed.reason() == Reason.SHUTDOWN);
    }

    /** The application refused the request's work at a concurrency limit of its own: a shed request too, retried later. */
    static boolean refusedByTheApplication(Throwable error) {
        return error instanceof RejectedExecutionException && !(error instanceof CoroutineRejectedException);
    }

    @Override
    public Mono<Void> handle(ServerWebExchange exchange, Throwable error) {
        ServerHttpResponse response = exchange.getResponse();
        boolean refused = refusedByTheApplication(error);
        if (!handles(error) && !refused || response.isCommitted()) {
            return Mono.error(error); // not ours, or too late for a status: let the connection end
        }
        boolean shed = error instanceof CoroutineRejectedException || refused;
        // a stream the shutdown ended before it sent anything: another instance takes the retry
        boolean stopping = error instanceof StreamClosedException closed && closed.reason() == Reason.SHUTDOWN;
        HttpStatus status = stopping ? HttpStatus.SERVICE_UNAVAILABLE : shed ? shedStatus : timeoutStatus;
        response.setStatusCode(status);
        HttpHeaders headers = response.getHeaders();
        headers.setContentType(MediaType.APPLICATION_PROBLEM_JSON);
        if (shed || stopping) {
            headers.set(HttpHeaders.RETRY_AFTER, Integer.toString(retryAfterSeconds.getAsInt()));
        }
        // the application's message may hold anything: its type alone, as Spring Boot leaves messages out by default
        String detail = refused
                ? "the application refused the request at a limit of its own ("
                        + error.getClass().getSimpleName() + "); retry later"
                : error.getMessage();
        byte[] body = problem(status, detail).getBytes(StandardCharsets.UTF_8);
        headers.setContentLength(body.length);
        return response.writeWith(Mono.just(response.bufferFactory().wrap(body)));
    }

    /** A problem-detail body (RFC 9457); {@code detail} is cosched's own message, no user input. */
    static String problem(HttpStatus status, @Nullable String detail) {
        return "{\"type\":\"about:blank\",\"title\":\"" + status.getReasonPhrase() + "\",\"status\":" + status.value()
                + ",\"detail\":\"" + detail + "\"}";
    }

    @Override
    public int getOrder() {
        return ORDER;
    }
}
