package io.cosched.bench.mvc;

import io.cosched.bench.http.AcquireTimes;
import io.cosched.bench.http.Backends;
import io.cosched.bench.http.BlockingEndpoints;
import io.cosched.bench.http.StreamCounters;
import io.cosched.bench.http.VirtualFanout;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Import;
import org.springframework.web.bind.annotation.RestController;

/**
 * What many users pick instead of WebFlux: Spring MVC on Tomcat with virtual threads
 * ({@code spring.threads.virtual.enabled=true}), serving the HTTP benchmark's blocking endpoints with
 * the same {@link Backends} as cosched's variant: the RestClient from Spring Boot's builder (here on
 * the JDK's HTTP client, Boot's choice for this classpath), the JDK client itself, and JdbcClient; its
 * {@code /fanout} is the WebFlux virtual-thread variant's ({@link VirtualFanout}).
 */
@SpringBootApplication
@RestController
@Import({Backends.class, StreamCounters.class, AcquireTimes.class, VirtualFanout.class})
public class MvcBenchApp extends BlockingEndpoints {

    public MvcBenchApp(Backends backends) {
        super(backends);
    }

    public static void main(String[] args) {
        SpringApplication.run(MvcBenchApp.class, args);
    }
}
