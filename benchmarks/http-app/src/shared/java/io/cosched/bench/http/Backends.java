package io.cosched.bench.http;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.stereotype.Component;
import org.springframework.web.client.RestClient;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/**
 * What the blocking variants call, the way a Spring Boot user would: the {@code RestClient} from
 * Boot's builder (whatever request factory the variant's stack gives it), the JDK's HTTP client for
 * comparison, {@code JdbcClient} on Boot's {@code DataSource} (H2, or PostgreSQL or MariaDB when the
 * server is started with {@code spring.datasource.url} pointing there), and Boot's {@code StringRedisTemplate}
 * (Lettuce; the redis scenario starts the server with {@code spring.data.redis.url}).
 */
@Component
public class Backends {

    private final RestClient rest;
    private final HttpClient jdk = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5)).build();
    private final HttpRequest downstream;
    private final ObjectProvider<JdbcClient> jdbc;
    private final ObjectProvider<StringRedisTemplate> redis;

    public Backends(@Value("${bench.downstream-url:http://127.0.0.1:18099/}") String downstreamUrl,
            RestClient.Builder rest, ObjectProvider<JdbcClient> jdbc, ObjectProvider<StringRedisTemplate> redis) {
        this.downstream = HttpRequest.newBuilder(URI.create(downstreamUrl)).timeout(Duration.ofSeconds(30)).build();
        this.rest = rest.baseUrl(downstreamUrl).build();
        this.jdbc = jdbc;
        this.redis = redis;
    }

    public URI downstreamUri() {
        return downstream.uri();
    }

    /** A blocking call to the stub with the RestClient from Spring Boot's builder. */
    public String callDownstream() {
        return rest.get().retrieve().body(String.class);
    }

    /** The same call with the JDK's HTTP client. */
    public String callDownstreamJdk() throws IOException, InterruptedException {
        return jdk.send(downstream, HttpResponse.BodyHandlers.ofString()).body();
    }

    /** A blocking Redis GET of a small value ({@code bench:item}, which the benchmark sets) with Boot's template. */
    public String readRedis() {
        return redis.getObject().opsForValue().get("bench:item");
    }

    /**
     * Ten rows read as a stream, the way Spring's docs show it ({@code JdbcClient...stream()} in a try-with-resources):
     * Spring gives the connection back from the stream's close, through the statement (benchmarks/pool.sh).
     */
    public String streamRows(int id) {
        int from = Math.floorMod(id, 990) + 1;
        try (java.util.stream.Stream<String> names = jdbc.getObject()
                .sql("SELECT name FROM items WHERE id >= ? AND id < ? ORDER BY id")
                .param(from)
                .param(from + 10)
                .query(String.class)
                .stream()) {
            return names.collect(java.util.stream.Collectors.joining(","));
        }
    }

    /** A blocking JDBC read of one row. */
    public String readRow(int id) {
        return jdbc.getObject().sql("SELECT name FROM items WHERE id = ?").param(Math.floorMod(id, 1000) + 1)
                .query(String.class).single();
    }
}
