package io.cosched.bench.http;

import io.cosched.spring.web.RunAsCoroutine;
import org.springframework.boot.autoconfigure.condition.ConditionalOnExpression;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.reactive.function.client.WebClient;
import reactor.core.publisher.Mono;

/**
 * The blocking endpoints on WebFlux. With cosched they run as coroutines on the loop that read the
 * request; in the {@code virtual} variant cosched is off and Spring runs them on JDK virtual threads.
 */
@RestController
@RunAsCoroutine
@ConditionalOnExpression(
        "'${bench.variant}'.equalsIgnoreCase('cosched') or '${bench.variant}'.equalsIgnoreCase('virtual')")
public class BlockingHandlers extends BlockingEndpoints {

    private final WebClient webClient;

    public BlockingHandlers(Backends backends, WebClient.Builder http) {
        super(backends);
        // Spring Boot's builder as it comes: Boot's connector (cosched's on the cosched variants), and with
        // Actuator the http.client.requests observation
        this.webClient = http.baseUrl(backends.downstreamUri().toString()).build();
    }

    /** The downstream call with a {@code WebClient} used blocking, as WebFlux code bases do: the downstream-webclient scenario. */
    @GetMapping("/downstream-webclient")
    public String downstreamWebClient() {
        return webClient.get().retrieve().bodyToMono(String.class).block();
    }

    /** Holds its coroutine (and in-flight slot) for {@code ms}: what fills the server in benchmarks/shed.sh. */
    @GetMapping("/hold")
    public String hold(@RequestParam long ms) throws InterruptedException {
        Thread.sleep(ms);
        return "held";
    }

    /**
     * hello as a {@code Mono} handler in the same JVM (a reactive return type never runs as a coroutine):
     * the benchmark's hello-mono scenario, to compare a coroutine handler with the reactive one on the
     * same server, Spring's share of the work being the same.
     */
    @GetMapping("/hello-mono")
    public Mono<String> helloMono() {
        return Mono.just("hello");
    }
}
