package io.cosched.bench.micronaut;

import io.micronaut.runtime.Micronaut;

/**
 * The Micronaut server of the HTTP benchmarks, set up as Micronaut's loom-carrier guide recommends
 * (application.properties): one Netty event loop that carries the virtual threads the blocking
 * controllers run on ({@code micronaut.netty.event-loops.default.loom-carrier=true},
 * {@code micronaut.server.thread-selection=BLOCKING}), and the HTTP client on that same loop group.
 * Needs {@code --add-opens java.base/java.lang=ALL-UNNAMED}.
 *
 * <p>Takes the Spring variants' arguments: {@code --server.port}, {@code --bench.downstream-url},
 * {@code --spring.datasource.url|username|password}, {@code --spring.sql.init.mode=never},
 * {@code --spring.data.redis.url}.
 */
public final class MicronautBenchApp {

    private MicronautBenchApp() {
    }

    public static void main(String[] args) {
        java.util.List<String> mapped = new java.util.ArrayList<>();
        for (String a : args) {
            mapped.add(a.replace("--server.port=", "--micronaut.server.port=")
                    .replace("--bench.downstream-url=", "--micronaut.http.services.downstream.url=")
                    .replace("--spring.datasource.", "--datasources.default.")
                    .replace("--spring.data.redis.url=", "--redis.uri="));
        }
        Micronaut.run(MicronautBenchApp.class, mapped.toArray(String[]::new));
    }
}
