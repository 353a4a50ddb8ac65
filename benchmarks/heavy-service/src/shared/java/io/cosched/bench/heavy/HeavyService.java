package io.cosched.bench.heavy;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

/**
 * The heavy service of the benchmarks (benchmarks/heavy.sh), one source for two stacks: an OAuth2 resource
 * server (JWTs checked against the keys of a {@code jwk-set-uri}), method security, OpenTelemetry tracing
 * through Micrometer with spans exported over OTLP, Actuator with Prometheus, Spring Data JDBC and Spring Data
 * JPA on PostgreSQL behind HikariCP, and Boot's {@code RestClient}. Module {@code heavy-service} serves it on
 * WebFlux (with cosched, or on Spring's virtual threads), {@code heavy-service-mvc} on Spring MVC, Tomcat and
 * virtual threads; only the security configuration differs.
 */
@SpringBootApplication
public class HeavyService {

    public static void main(String[] args) {
        SpringApplication.run(HeavyService.class, args);
    }
}
