package io.cosched.bench.http;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnExpression;
import org.springframework.data.redis.core.ReactiveStringRedisTemplate;
import org.springframework.http.client.ReactorResourceFactory;
import org.springframework.http.client.reactive.ReactorClientHttpConnector;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.reactive.function.client.WebClient;
import reactor.core.publisher.Mono;

/**
 * Pure reactive handlers, the practical limit: no hand-off at all, WebClient (on the server's own
 * loops) for the downstream call, and R2DBC (on the same loops) for the database when the server
 * runs against PostgreSQL or MariaDB, and Lettuce's reactive API for Redis. There is no reactive driver for H2 here: with H2
 * this variant has no /jdbc.
 */
@RestController
@ConditionalOnExpression("'${bench.variant}'.equalsIgnoreCase('reactive')")
public class ReactiveHandlers {

    private final WebClient client;
    private final String uri;
    private final ObjectProvider<DatabaseClient> database;
    private final ObjectProvider<ReactiveStringRedisTemplate> redis;

    public ReactiveHandlers(
            Backends backends,
            ReactorResourceFactory loops,
            ObjectProvider<DatabaseClient> database,
            ObjectProvider<ReactiveStringRedisTemplate> redis) {
        this.client = WebClient.builder()
                .clientConnector(new ReactorClientHttpConnector(loops, c -> c))
                .build();
        this.uri = backends.downstreamUri().toString();
        this.database = database;
        this.redis = redis;
    }

    @GetMapping("/hello")
    public Mono<String> hello() {
        return Mono.just("hello");
    }

    @GetMapping("/downstream")
    public Mono<String> downstream() {
        return client.get().uri(uri).retrieve().bodyToMono(String.class);
    }

    /** Three downstream calls at once (zip subscribes to all three), the bodies as a JSON array: the fanout scenario. */
    @GetMapping("/fanout")
    public Mono<String> fanout() {
        return Mono.zip(downstream(), downstream(), downstream())
                .map(t -> "[" + t.getT1() + "," + t.getT2() + "," + t.getT3() + "]");
    }

    @GetMapping("/jdbc")
    public Mono<String> jdbc(@RequestParam(defaultValue = "1") int id) {
        // a named parameter: Spring writes each database's own marker ($1 on PostgreSQL, ? on MariaDB)
        return database.getObject()
                .sql("SELECT name FROM items WHERE id = :id")
                .bind("id", Math.floorMod(id, 1000) + 1)
                .map(row -> row.get(0, String.class))
                .one();
    }

    /** Lettuce's reactive API through Boot's reactive template: the reply is read on Lettuce's own loop. */
    @GetMapping("/redis")
    public Mono<String> redis() {
        return redis.getObject().opsForValue().get("bench:item");
    }

    @GetMapping("/thread")
    public Mono<String> thread() {
        return Mono.fromSupplier(() -> Thread.currentThread().toString());
    }
}
