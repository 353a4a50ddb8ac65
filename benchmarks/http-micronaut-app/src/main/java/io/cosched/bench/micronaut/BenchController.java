package io.cosched.bench.micronaut;

import io.lettuce.core.api.StatefulRedisConnection;
import io.micronaut.context.BeanProvider;
import io.micronaut.context.annotation.Value;
import io.micronaut.http.annotation.Controller;
import io.micronaut.http.annotation.Get;
import io.micronaut.http.annotation.QueryValue;
import io.micronaut.http.client.HttpClient;
import io.micronaut.http.client.annotation.Client;

import javax.sql.DataSource;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;

/**
 * The endpoints of the Spring variants, as blocking Micronaut controllers: the downstream call with
 * Micronaut's own HTTP client through {@code toBlocking()} (and the JDK client for the {@code -jdk}
 * endpoint), the row with plain JDBC on Micronaut's HikariCP data source, the Redis GET with
 * Micronaut Redis's Lettuce connection through its blocking API (made on first use: the other
 * scenarios run without a Redis).
 */
@Controller
public class BenchController {

    private final HttpClient client;
    private final java.net.http.HttpClient jdk = java.net.http.HttpClient.newBuilder()
            .version(java.net.http.HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(5)).build();
    private final HttpRequest jdkRequest;
    private final DataSource dataSource;
    private final BeanProvider<StatefulRedisConnection<String, String>> redis;

    public BenchController(@Client(id = "downstream") HttpClient client,
            @Value("${micronaut.http.services.downstream.url}") String downstreamUrl, DataSource dataSource,
            BeanProvider<StatefulRedisConnection<String, String>> redis) {
        this.client = client;
        this.jdkRequest = HttpRequest.newBuilder(URI.create(downstreamUrl)).timeout(Duration.ofSeconds(30)).build();
        this.dataSource = dataSource;
        this.redis = redis;
    }

    @Get("/hello")
    public String hello() {
        return "hello";
    }

    @Get("/downstream")
    public String downstream() {
        return client.toBlocking().retrieve("/");
    }

    @Get("/downstream-jdk")
    public String downstreamJdk() throws IOException, InterruptedException {
        return jdk.send(jdkRequest, HttpResponse.BodyHandlers.ofString()).body();
    }

    @Get("/jdbc")
    public String jdbc(@QueryValue(defaultValue = "1") int id) throws SQLException {
        try (Connection c = dataSource.getConnection();
             PreparedStatement s = c.prepareStatement("SELECT name FROM items WHERE id = ?")) {
            s.setInt(1, Math.floorMod(id, 1000) + 1);
            try (ResultSet rs = s.executeQuery()) {
                rs.next();
                return rs.getString(1);
            }
        }
    }

    @Get("/redis")
    public String redis() {
        return redis.get().sync().get("bench:item");
    }

    @Get("/thread")
    public String thread() {
        return Thread.currentThread().toString();
    }
}
