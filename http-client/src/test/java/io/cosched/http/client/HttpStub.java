package io.cosched.http.client;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import javax.net.ssl.SSLContext;

/**
 * The HTTP server tests call (the loop HTTP client's, a WebClient's, a handler's downstream): the
 * JDK's HTTP server on platform threads, so that nothing it
 * does can resume a coroutine from a loop thread. It remembers the client ports it saw (one per
 * connection).
 */
public final class HttpStub implements AutoCloseable {

    /** Deterministic bytes of the {@code /stream} body. */
    public static byte streamByte(long i) {
        return (byte) (i * 31 + 7);
    }

    private final HttpServer server;
    private final ExecutorService threads = Executors.newFixedThreadPool(
            8, r -> Thread.ofPlatform().daemon().name("http-stub").unstarted(r));
    public final Set<Integer> clientPorts = ConcurrentHashMap.newKeySet();
    /** Requests being handled now, and the most there have been at once. */
    public final java.util.concurrent.atomic.AtomicInteger inFlight = new java.util.concurrent.atomic.AtomicInteger();

    public final java.util.concurrent.atomic.AtomicInteger maxInFlight =
            new java.util.concurrent.atomic.AtomicInteger();

    public HttpStub() throws IOException {
        this(null);
    }

    /** With {@code tls}, an HTTPS server. */
    public HttpStub(SSLContext tls) throws IOException {
        InetSocketAddress any = new InetSocketAddress(InetAddress.getLoopbackAddress(), 0);
        if (tls == null) {
            server = HttpServer.create(any, 100);
        } else {
            HttpsServer https = HttpsServer.create(any, 100);
            https.setHttpsConfigurator(new HttpsConfigurator(tls));
            server = https;
        }
        server.setExecutor(threads);
        server.createContext("/", this::handle);
        server.start();
    }

    public URI uri(String path) {
        String scheme = server instanceof HttpsServer ? "https" : "http";
        return URI.create(scheme + "://localhost:" + server.getAddress().getPort() + path);
    }

    public int port() {
        return server.getAddress().getPort();
    }

    private void handle(HttpExchange ex) throws IOException {
        maxInFlight.accumulateAndGet(inFlight.incrementAndGet(), Math::max);
        try {
            serve(ex);
        } finally {
            inFlight.decrementAndGet();
        }
    }

    private void serve(HttpExchange ex) throws IOException {
        clientPorts.add(ex.getRemoteAddress().getPort());
        String path = ex.getRequestURI().getPath();
        String query = ex.getRequestURI().getRawQuery();
        byte[] requestBody = ex.getRequestBody().readAllBytes();
        try {
            switch (path) {
                case "/hello" -> send(ex, 200, "hello");
                case "/echo" -> {
                    int status =
                            query != null && query.startsWith("status=") ? Integer.parseInt(query.substring(7)) : 200;
                    String header = ex.getRequestHeaders().getFirst("X-Test");
                    send(
                            ex,
                            status,
                            ex.getRequestMethod() + " " + new String(requestBody, StandardCharsets.UTF_8) + " x-test="
                                    + header + " length="
                                    + ex.getRequestHeaders().getFirst("Content-Length"));
                }
                case "/auth" -> {
                    String auth = ex.getRequestHeaders().getFirst("Authorization");
                    send(ex, 200, auth == null ? "none" : auth);
                }
                case "/slow" -> {
                    Thread.sleep(Long.parseLong(query.substring(query.indexOf('=') + 1)));
                    send(ex, 200, "slow");
                }
                case "/stream" -> {
                    long size = Long.parseLong(query.substring(query.indexOf('=') + 1));
                    ex.sendResponseHeaders(200, 0); // chunked
                    try (OutputStream out = ex.getResponseBody()) {
                        byte[] chunk = new byte[8192];
                        for (long i = 0; i < size; ) {
                            int n = (int) Math.min(chunk.length, size - i);
                            for (int k = 0; k < n; k++) {
                                chunk[k] = streamByte(i + k);
                            }
                            out.write(chunk, 0, n);
                            i += n;
                        }
                    }
                }
                case "/empty" -> {
                    ex.sendResponseHeaders(204, -1);
                    ex.close();
                }
                case "/redirect" -> {
                    // /redirect?code=302&to=<url-or-path>
                    String[] parts = query.split("&", 2);
                    int code = Integer.parseInt(parts[0].substring(5));
                    String to = java.net.URLDecoder.decode(parts[1].substring(3), StandardCharsets.UTF_8);
                    ex.getResponseHeaders().add("Location", to);
                    ex.sendResponseHeaders(code, -1);
                    ex.close();
                }
                default -> send(ex, 404, "no " + path);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            ex.close();
        }
    }

    private static void send(HttpExchange ex, int status, String body) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        ex.getResponseHeaders().add("Content-Type", "text/plain; charset=utf-8");
        if ("close".equalsIgnoreCase(ex.getRequestHeaders().getFirst("Connection"))) {
            // as an HTTP/1.1 server must (RFC 9112, 9.6): else a client may pool the connection this server closes
            ex.getResponseHeaders().set("Connection", "close");
        }
        if ("HEAD".equals(ex.getRequestMethod())) {
            ex.sendResponseHeaders(status, -1);
            ex.close();
            return;
        }
        ex.sendResponseHeaders(status, bytes.length);
        try (OutputStream out = ex.getResponseBody()) {
            out.write(bytes);
        }
    }

    @Override
    public void close() {
        server.stop(0);
        threads.shutdownNow();
    }
}
