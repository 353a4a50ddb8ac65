package io.cosched.bench.http;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

/**
 * The server of the HTTP benchmarks. {@code bench.variant} picks how the same endpoints are
 * written and run (see {@link Variant}); the JVM flags and the cosched/Spring properties that go
 * with each variant are set by {@code benchmarks/run.sh}.
 *
 * <ul>
 *   <li>{@code GET /hello}: a constant string;</li>
 *   <li>{@code GET /downstream}: one call to the stub at {@code bench.downstream-url} (20 ms);</li>
 *   <li>{@code GET /fanout}: three such calls at once, the bodies as a JSON array once all three are back
 *       (cosched's {@code TaskScope}, {@code CompletableFuture}s on virtual threads, or {@code Mono.zip});</li>
 *   <li>{@code GET /jdbc?id=n}: one row from an in-memory H2 table through HikariCP (or PostgreSQL, MariaDB);</li>
 *   <li>{@code GET /redis}: one small value from Redis through Spring Data Redis and Lettuce;</li>
 *   <li>{@code GET /wakeups}: with cosched, its loops' resumes so far, "local remote" (run.sh reads it around
 *       each window).</li>
 * </ul>
 */
@SpringBootApplication
public class BenchApp {

    public static void main(String[] args) {
        SpringApplication.run(BenchApp.class, args);
    }
}
