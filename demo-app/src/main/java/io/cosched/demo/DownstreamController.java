package io.cosched.demo;

import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Mono;

/**
 * A stand-in for a slow, flaky pricing service, so that the demo is self-contained. Reactive, so
 * its delay holds no thread. Its delay and failures can be changed while the app runs.
 */
@RestController
@RequestMapping("/downstream")
public class DownstreamController {

    private volatile Duration delay;
    private volatile double failureRate;
    private final AtomicInteger failNext = new AtomicInteger();

    public DownstreamController(DemoProperties properties) {
        this.delay = properties.getDownstream().getDelay();
        this.failureRate = properties.getDownstream().getFailureRate();
    }

    @GetMapping("/price/{sku}")
    public Mono<ResponseEntity<BlockingQuoteService.Price>> price(@PathVariable String sku) {
        boolean fail = failNext.getAndUpdate(n -> Math.max(0, n - 1)) > 0
                || ThreadLocalRandom.current().nextDouble() < failureRate;
        ResponseEntity<BlockingQuoteService.Price> answer = fail
                ? ResponseEntity.status(HttpStatus.SERVICE_UNAVAILABLE).build()
                : ResponseEntity.ok(new BlockingQuoteService.Price(sku, 100 + Math.floorMod(sku.hashCode(), 9_900)));
        Duration d = delay;
        return d.isZero() ? Mono.just(answer) : Mono.delay(d).thenReturn(answer);
    }

    @GetMapping("/settings")
    public Settings settings() {
        return new Settings(delay.toMillis(), failureRate, failNext.get());
    }

    /** Changes the stub: its delay, its random failure rate, and how many next calls fail for sure. */
    @PostMapping("/settings")
    public Settings change(@RequestBody Settings settings) {
        if (settings.delayMs() < 0) {
            throw new IllegalArgumentException("delayMs: " + settings.delayMs() + " (expected: >= 0)");
        }
        Checks.rate("failureRate", settings.failureRate());
        Checks.between("failNext", settings.failNext(), 0, 1_000_000);
        delay = Duration.ofMillis(settings.delayMs());
        failureRate = settings.failureRate();
        failNext.set(settings.failNext());
        return settings();
    }

    /** The stub's settings. */
    public record Settings(long delayMs, double failureRate, int failNext) {}
}
