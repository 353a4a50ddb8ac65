package io.cosched.demo;

import io.cosched.spring.web.RunAsCoroutine;
import org.springframework.http.HttpStatus;
import org.springframework.http.ProblemDetail;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Mono;

/** The two styles side by side: {@code /api/quote/{sku}} blocking, {@code /api/reactive/quote/{sku}} reactive. */
@RestController
public class QuoteController {

    private final BlockingQuoteService blocking;
    private final ReactiveQuoteService reactive;

    public QuoteController(BlockingQuoteService blocking, ReactiveQuoteService reactive) {
        this.blocking = blocking;
        this.reactive = reactive;
    }

    @RunAsCoroutine
    @GetMapping("/api/quote/{sku}")
    public Quote quote(@PathVariable String sku) throws InterruptedException {
        return blocking.quote(sku);
    }

    @GetMapping("/api/reactive/quote/{sku}")
    public Mono<Quote> reactiveQuote(@PathVariable String sku) {
        return reactive.quote(sku);
    }

    /** 504 when the pricing service did not answer in time, 502 when it failed. */
    @ExceptionHandler(QuoteUnavailableException.class)
    ProblemDetail unavailable(QuoteUnavailableException e) {
        return ProblemDetail.forStatusAndDetail(
                e.timedOut() ? HttpStatus.GATEWAY_TIMEOUT : HttpStatus.BAD_GATEWAY, e.getMessage());
    }
}
