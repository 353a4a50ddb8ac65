package io.cosched.bench.mvc;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.client.RestClient;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/**
 * What many users pick instead of WebFlux: Spring MVC on Tomcat with virtual threads
 * ({@code spring.threads.virtual.enabled=true}), serving the HTTP benchmark's endpoints with the
 * same blocking bodies as cosched's variant: the RestClient from Spring Boot's builder (here on the
 * JDK's HTTP client, Boot's choice for this classpath), the JDK client itself, and JdbcClient.
 */
@SpringBootApplication
@RestController
public class MvcBenchApp {

    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5)).build();
    private final HttpRequest downstream;
    private final RestClient rest;
    private final JdbcClient jdbc;

    public MvcBenchApp(@Value("${bench.downstream-url:http://127.0.0.1:18099/}") String downstreamUrl,
            RestClient.Builder rest, JdbcClient jdbc) {
        this.downstream = HttpRequest.newBuilder(URI.create(downstreamUrl)).timeout(Duration.ofSeconds(30)).build();
        this.rest = rest.baseUrl(downstreamUrl).build();
        this.jdbc = jdbc;
    }

    public static void main(String[] args) {
        SpringApplication.run(MvcBenchApp.class, args);
    }

    @GetMapping("/hello")
    public String hello() {
        return "hello";
    }

    @GetMapping("/downstream")
    public String downstream() {
        return rest.get().retrieve().body(String.class);
    }

    @GetMapping("/downstream-jdk")
    public String downstreamJdk() throws IOException, InterruptedException {
        return http.send(downstream, HttpResponse.BodyHandlers.ofString()).body();
    }

    @GetMapping("/jdbc")
    public String jdbc(@RequestParam(defaultValue = "1") int id) {
        return jdbc.sql("SELECT name FROM items WHERE id = ?").param(Math.floorMod(id, 1000) + 1).query(String.class).single();
    }

    @GetMapping("/thread")
    public String thread() {
        return Thread.currentThread().toString();
    }
}
