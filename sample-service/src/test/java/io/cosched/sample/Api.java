package io.cosched.sample;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;

/** The sample service's API over HTTP/1.1, with HTTP basic or bearer credentials. */
final class Api {

    private final HttpClient client = HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(10))
            .build();
    private final String base;

    Api(int port) {
        this.base = "http://127.0.0.1:" + port;
    }

    static String basic(String user, String password) {
        return "Basic " + Base64.getEncoder().encodeToString((user + ":" + password).getBytes(StandardCharsets.UTF_8));
    }

    static String bearer(String token) {
        return "Bearer " + token;
    }

    HttpResponse<String> get(String path, String authorization) throws IOException, InterruptedException {
        HttpRequest.Builder b = request(path, authorization).GET();
        return client.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    HttpResponse<String> get(String path) throws IOException, InterruptedException {
        return get(path, null);
    }

    HttpResponse<String> postJson(String path, String authorization, String json)
            throws IOException, InterruptedException {
        HttpRequest.Builder b = request(path, authorization)
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(json));
        return client.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    HttpResponse<String> put(String path, String authorization) throws IOException, InterruptedException {
        HttpRequest.Builder b = request(path, authorization).PUT(HttpRequest.BodyPublishers.noBody());
        return client.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    private HttpRequest.Builder request(String path, String authorization) {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(base + path)).timeout(Duration.ofSeconds(60));
        if (authorization != null) {
            b.header("Authorization", authorization);
        }
        return b;
    }
}
