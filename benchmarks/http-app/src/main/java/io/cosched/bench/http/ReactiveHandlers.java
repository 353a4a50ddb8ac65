package io.cosched.bench.http;

import org.springframework.boot.autoconfigure.condition.ConditionalOnExpression;
import org.springframework.http.client.ReactorResourceFactory;
import org.springframework.http.client.reactive.ReactorClientHttpConnector;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.reactive.function.client.WebClient;
import reactor.core.publisher.Mono;

/**
 * Pure reactive handlers, the practical limit: no hand-off at all, and WebClient (on the server's
 * own loops) for the downstream call. There is no reactive JDBC here, so this variant has no /jdbc.
 */
@RestController
@ConditionalOnExpression("'${bench.variant}'.equalsIgnoreCase('reactive')")
public class ReactiveHandlers {

    private final WebClient client;
    private final String uri;

    public ReactiveHandlers(Backends backends, ReactorResourceFactory loops) {
        this.client = WebClient.builder().clientConnector(new ReactorClientHttpConnector(loops, c -> c)).build();
        this.uri = backends.downstreamUri().toString();
    }

    @GetMapping("/hello")
    public Mono<String> hello() {
        return Mono.just("hello");
    }

    @GetMapping("/downstream")
    public Mono<String> downstream() {
        return client.get().uri(uri).retrieve().bodyToMono(String.class);
    }

    @GetMapping("/thread")
    public Mono<String> thread() {
        return Mono.fromSupplier(() -> Thread.currentThread().toString());
    }
}
