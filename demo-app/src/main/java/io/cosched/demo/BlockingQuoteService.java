package io.cosched.demo;

import io.cosched.Coroutines;
import java.net.SocketTimeoutException;
import java.time.Duration;
import org.springframework.boot.http.client.ClientHttpRequestFactoryBuilder;
import org.springframework.boot.http.client.HttpClientSettings;
import org.springframework.stereotype.Service;
import org.springframework.web.client.HttpServerErrorException;
import org.springframework.web.client.ResourceAccessException;
import org.springframework.web.client.RestClient;

/**
 * The quote logic in blocking style: a blocking HTTP call with a per-call timeout, and a retry with
 * exponential back-off done by sleeping. Inside a coroutine, the call and the sleep park the
 * coroutine; the event loop runs other requests meanwhile. The client is Spring Boot's (cosched's
 * request factory, whose connections live on the calling coroutine's loop), with this service's own
 * timeouts on top of the application's {@code spring.http.clients.*} settings.
 */
@Service
public class BlockingQuoteService {

    private final RestClient http;
    private final PricingClient pricing;
    private final DemoProperties.Quote settings;

    public BlockingQuoteService(
            RestClient.Builder builder,
            ClientHttpRequestFactoryBuilder<?> requests,
            HttpClientSettings defaults,
            PricingClient pricing,
            DemoProperties properties) {
        this.settings = properties.getQuote();
        Duration timeout = settings.getTimeout();
        this.http = builder.requestFactory(requests.build(defaults.withTimeouts(timeout, timeout)))
                .build();
        this.pricing = pricing;
    }

    public Quote quote(String sku) throws InterruptedException {
        Duration backoff = settings.getBackoff();
        RuntimeException last = null;
        for (int attempt = 1; attempt <= settings.getAttempts(); attempt++) {
            try {
                Price price = http.get().uri(pricing.priceUrl(), sku).retrieve().body(Price.class);
                return new Quote(
                        sku,
                        price.cents(),
                        attempt,
                        "blocking",
                        Thread.currentThread().toString());
            } catch (ResourceAccessException | HttpServerErrorException e) {
                last = e;
                if (attempt < settings.getAttempts()) {
                    Coroutines.sleep(
                            backoff); // parks the coroutine on the loop's timer wheel (Thread.sleep: a JDK timer
                    // thread)
                    backoff = backoff.multipliedBy(2);
                }
            }
        }
        boolean timedOut = last instanceof ResourceAccessException && last.getCause() instanceof SocketTimeoutException;
        throw new QuoteUnavailableException(sku, settings.getAttempts(), timedOut, last);
    }

    /** The pricing service's answer. */
    public record Price(String sku, long cents) {}
}
