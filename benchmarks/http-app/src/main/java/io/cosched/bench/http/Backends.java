package io.cosched.bench.http;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.stereotype.Component;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/** What the blocking variants call: the same JDK HTTP client and the same JDBC query for all of them. */
@Component
public class Backends {

    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5)).build();
    private final HttpRequest downstream;
    private final JdbcClient jdbc;

    public Backends(@Value("${bench.downstream-url:http://127.0.0.1:18099/}") String downstreamUrl, JdbcClient jdbc) {
        this.downstream = HttpRequest.newBuilder(URI.create(downstreamUrl)).timeout(Duration.ofSeconds(30)).build();
        this.jdbc = jdbc;
    }

    public URI downstreamUri() {
        return downstream.uri();
    }

    /** A blocking call to the stub. */
    public String callDownstream() throws IOException, InterruptedException {
        return http.send(downstream, HttpResponse.BodyHandlers.ofString()).body();
    }

    /** A blocking JDBC read. */
    public String readRow(int id) {
        return jdbc.sql("SELECT name FROM items WHERE id = ?").param(Math.floorMod(id, 1000) + 1)
                .query(String.class).single();
    }
}
