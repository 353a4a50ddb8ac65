package io.cosched.demo;

import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import org.springframework.stereotype.Service;
import org.springframework.web.reactive.function.client.WebClient;
import org.springframework.web.reactive.function.client.WebClientResponseException;
import reactor.core.publisher.Mono;
import reactor.util.retry.Retry;

/** The same quote logic as {@link BlockingQuoteService}, written reactively for comparison. */
@Service
public class ReactiveQuoteService {

    private final WebClient http;
    private final PricingClient pricing;
    private final DemoProperties.Quote settings;

    /**
     * Spring Boot's {@code WebClient.Builder}: on cosched's connector, whose calls from a reactive chain
     * (this one, subscribed on the loop that serves the request) go to Reactor Netty's client on the same
     * event loops as the server; a coroutine's calls would go over cosched's loop client.
     */
    public ReactiveQuoteService(WebClient.Builder http, PricingClient pricing, DemoProperties properties) {
        this.http = http.build();
        this.pricing = pricing;
        this.settings = properties.getQuote();
    }

    public Mono<Quote> quote(String sku) {
        AtomicInteger attempts = new AtomicInteger();
        return Mono.defer(() -> {
                    attempts.incrementAndGet();
                    return http.get()
                            .uri(pricing.priceUrl(), sku)
                            .retrieve()
                            .bodyToMono(BlockingQuoteService.Price.class)
                            .timeout(settings.getTimeout());
                })
                .retryWhen(Retry.backoff(settings.getAttempts() - 1, settings.getBackoff())
                        .jitter(0)
                        .filter(ReactiveQuoteService::retryable)
                        .onRetryExhaustedThrow((spec, signal) -> signal.failure()))
                .map(price -> new Quote(
                        sku,
                        price.cents(),
                        attempts.get(),
                        "reactive",
                        Thread.currentThread().toString()))
                .onErrorMap(
                        ReactiveQuoteService::retryable,
                        e -> new QuoteUnavailableException(sku, attempts.get(), e instanceof TimeoutException, e));
    }

    private static boolean retryable(Throwable e) {
        return e instanceof TimeoutException
                || e instanceof WebClientResponseException r
                        && r.getStatusCode().is5xxServerError();
    }
}
