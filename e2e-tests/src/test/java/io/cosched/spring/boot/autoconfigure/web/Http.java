package io.cosched.spring.boot.autoconfigure.web;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;

/** A plain JDK HTTP/1.1 client for the web tests: one connection per concurrent request. */
final class Http {

    private final HttpClient client = HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(10))
            .build();
    private final String base;
    private final int port;

    Http(int port) {
        this.base = "http://127.0.0.1:" + port;
        this.port = port;
    }

    /**
     * Writes {@code requests} (raw HTTP/1.1, the last one asking to close) on one new connection and
     * returns all the server wrote until it closed.
     */
    String raw(String requests) throws IOException {
        try (java.net.Socket socket = new java.net.Socket(java.net.InetAddress.getLoopbackAddress(), port)) {
            socket.setSoTimeout(10_000);
            socket.getOutputStream().write(requests.getBytes(java.nio.charset.StandardCharsets.US_ASCII));
            socket.getOutputStream().flush();
            return new String(socket.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.US_ASCII);
        }
    }

    HttpResponse<String> get(String path, String... headers) throws IOException, InterruptedException {
        return client.send(request(path, headers).GET().build(), HttpResponse.BodyHandlers.ofString());
    }

    CompletableFuture<HttpResponse<String>> getAsync(String path) {
        return client.sendAsync(request(path).GET().build(), HttpResponse.BodyHandlers.ofString());
    }

    /** Sends {@code path} over a new connection of its own (a client made for it). */
    CompletableFuture<HttpResponse<String>> getOnNewConnection(String path, String... headers) {
        HttpClient fresh = HttpClient.newBuilder()
                .version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(Duration.ofSeconds(10))
                .build();
        return fresh.sendAsync(request(path, headers).GET().build(), HttpResponse.BodyHandlers.ofString());
    }

    /**
     * Sends {@code path} on {@code connections} new connections at once and returns the first answer:
     * the server spreads new connections over its loops, so one of them reaches a loop that is not stuck.
     */
    HttpResponse<String> firstAnswer(String path, int connections) throws Exception {
        CompletableFuture<?>[] all = new CompletableFuture<?>[connections];
        for (int i = 0; i < connections; i++) {
            HttpClient fresh = HttpClient.newBuilder()
                    .version(HttpClient.Version.HTTP_1_1)
                    .connectTimeout(Duration.ofSeconds(10))
                    .build();
            all[i] = fresh.sendAsync(request(path).GET().build(), HttpResponse.BodyHandlers.ofString());
        }
        @SuppressWarnings("unchecked")
        HttpResponse<String> first =
                (HttpResponse<String>) CompletableFuture.anyOf(all).get(30, java.util.concurrent.TimeUnit.SECONDS);
        return first;
    }

    HttpResponse<String> post(String path, String body) throws IOException, InterruptedException {
        return client.send(
                request(path).POST(HttpRequest.BodyPublishers.ofString(body)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    private HttpRequest.Builder request(String path, String... headers) {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(base + path)).timeout(Duration.ofSeconds(90));
        if (headers.length > 0) {
            b.headers(headers);
        }
        return b;
    }
}
