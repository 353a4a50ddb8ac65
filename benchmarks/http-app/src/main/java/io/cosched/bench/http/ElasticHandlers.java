package io.cosched.bench.http;

import org.springframework.boot.autoconfigure.condition.ConditionalOnExpression;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/** The usual WebFlux way with blocking code: the same bodies, moved to Reactor's boundedElastic pool. */
@RestController
@ConditionalOnExpression("'${bench.variant}'.equalsIgnoreCase('elastic')")
public class ElasticHandlers {

    private final Backends backends;

    public ElasticHandlers(Backends backends) {
        this.backends = backends;
    }

    @GetMapping("/hello")
    public Mono<String> hello() {
        return Mono.fromCallable(() -> "hello").subscribeOn(Schedulers.boundedElastic());
    }

    @GetMapping("/downstream")
    public Mono<String> downstream() {
        return Mono.fromCallable(backends::callDownstream).subscribeOn(Schedulers.boundedElastic());
    }

    @GetMapping("/downstream-jdk")
    public Mono<String> downstreamJdk() {
        return Mono.fromCallable(backends::callDownstreamJdk).subscribeOn(Schedulers.boundedElastic());
    }

    @GetMapping("/jdbc")
    public Mono<String> jdbc(@RequestParam(defaultValue = "1") int id) {
        return Mono.fromCallable(() -> backends.readRow(id)).subscribeOn(Schedulers.boundedElastic());
    }

    @GetMapping("/redis")
    public Mono<String> redis() {
        return Mono.fromCallable(backends::readRedis).subscribeOn(Schedulers.boundedElastic());
    }

    @GetMapping("/thread")
    public Mono<String> thread() {
        return Mono.fromCallable(() -> Thread.currentThread().toString()).subscribeOn(Schedulers.boundedElastic());
    }
}
