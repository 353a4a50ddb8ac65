package io.cosched.bench.helidon;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.helidon.webclient.api.WebClient;
import io.helidon.webserver.WebServer;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

/**
 * The Helidon SE 4 server of the HTTP benchmarks: the endpoints of the Spring variants, written as
 * Helidon's docs show. Helidon 4 serves each connection on a virtual thread of its own (the JDK's
 * default scheduler; pinned to one core, that scheduler has one carrier), so the handlers block:
 * the downstream call through Helidon's blocking {@code WebClient} (and the JDK client for the
 * {@code -jdk} endpoint), the row through plain JDBC on HikariCP (H2, PostgreSQL or MariaDB), the
 * Redis GET through Lettuce's blocking API on one shared connection (what Spring Data Redis gives
 * the Spring variants; Helidon has no Redis client of its own).
 *
 * <p>Takes the Spring variants' arguments: {@code --server.port}, {@code --bench.downstream-url},
 * {@code --spring.datasource.url|username|password}, {@code --spring.sql.init.mode=never} (the
 * table exists already), {@code --spring.data.redis.url}; others are ignored.
 */
public final class HelidonBenchApp {

    private HelidonBenchApp() {
    }

    public static void main(String[] args) throws SQLException {
        Map<String, String> a = new HashMap<>();
        for (String arg : args) {
            int eq = arg.indexOf('=');
            if (arg.startsWith("--") && eq > 2) {
                a.put(arg.substring(2, eq), arg.substring(eq + 1));
            }
        }
        String downstream = a.getOrDefault("bench.downstream-url", "http://127.0.0.1:18099/");
        WebClient client = WebClient.builder().baseUri(downstream).build();
        HttpClient jdk = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(5)).build();
        HttpRequest jdkRequest = HttpRequest.newBuilder(URI.create(downstream)).timeout(Duration.ofSeconds(30)).build();

        HikariConfig db = new HikariConfig();
        db.setJdbcUrl(a.getOrDefault("spring.datasource.url", "jdbc:h2:mem:bench;DB_CLOSE_DELAY=-1"));
        db.setUsername(a.getOrDefault("spring.datasource.username", "sa"));
        db.setPassword(a.getOrDefault("spring.datasource.password", ""));
        db.setMaximumPoolSize(20); // as the Spring variants' spring.datasource.hikari.maximum-pool-size
        HikariDataSource pool = new HikariDataSource(db);
        if (!"never".equals(a.get("spring.sql.init.mode"))) {
            try (Connection c = pool.getConnection(); Statement s = c.createStatement()) {
                s.execute("DROP TABLE IF EXISTS items");
                s.execute("CREATE TABLE items (id INT PRIMARY KEY, name VARCHAR(40) NOT NULL)");
                s.execute("INSERT INTO items SELECT x, 'item-' || x FROM SYSTEM_RANGE(1, 1000)");
            }
        }

        String redisUrl = a.get("spring.data.redis.url");
        StatefulRedisConnection<String, String> redis = redisUrl == null ? null : RedisClient.create(redisUrl).connect();

        WebServer server = WebServer.builder()
                .port(Integer.parseInt(a.getOrDefault("server.port", "18080")))
                .routing(r -> r
                        .get("/hello", (req, res) -> res.send("hello"))
                        .get("/downstream", (req, res) -> res.send(client.get().requestEntity(String.class)))
                        .get("/downstream-jdk", (req, res) ->
                                res.send(jdk.send(jdkRequest, HttpResponse.BodyHandlers.ofString()).body()))
                        .get("/jdbc", (req, res) -> {
                            int id = req.query().first("id").map(Integer::parseInt).orElse(1);
                            res.send(readRow(pool, id));
                        })
                        .get("/redis", (req, res) -> {
                            if (redis == null) {
                                throw new IllegalStateException("no Redis: start with --spring.data.redis.url=redis://...");
                            }
                            res.send(redis.sync().get("bench:item"));
                        })
                        .get("/thread", (req, res) -> res.send(Thread.currentThread().toString())))
                .build()
                .start();
        System.out.println("helidon bench server on port " + server.port());
    }

    private static String readRow(HikariDataSource pool, int id) throws SQLException {
        try (Connection c = pool.getConnection();
             PreparedStatement s = c.prepareStatement("SELECT name FROM items WHERE id = ?")) {
            s.setInt(1, Math.floorMod(id, 1000) + 1);
            try (ResultSet rs = s.executeQuery()) {
                rs.next();
                return rs.getString(1);
            }
        }
    }
}
