package io.cosched.http.client;

import io.cosched.Arguments;
import io.cosched.IOManager;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpMethod;
import java.io.IOException;
import java.net.InetAddress;
import java.net.URI;
import java.time.Duration;
import java.util.Objects;
import java.util.function.Predicate;
import javax.net.ssl.SSLContext;
import org.jspecify.annotations.Nullable;

/**
 * A blocking HTTP/1.1 client whose connections are Netty channels on an {@link IOManager}'s event
 * loops. A call made in a coroutine takes a connection of that coroutine's own loop (one connection pool per
 * loop, a new connection on that loop when none is idle) and parks until the response arrives, so
 * the loop that reads it is the thread that resumes the coroutine; no other thread takes part.
 * Called from any other thread it simply blocks that thread. It knows nothing of Spring: Spring's
 * {@code RestClient} and {@code RestTemplate} use it through {@code LoopClientHttpRequestFactory},
 * an adapter in the Spring package of this module.
 *
 * <p>Failures are the JDK's own: a connect timeout is a {@code SocketTimeoutException("Connect timed
 * out")}, a read timeout (the longest wait for the next part of the response) a
 * {@code SocketTimeoutException("Read timed out")}, a refused connection a {@code ConnectException}.
 * Redirects are followed (at most {@value #MAX_REDIRECTS}, never from https to http) unless turned
 * off. A request that fails on a pooled connection the server had closed before any answer is sent
 * again on a new one when its method is idempotent. A caller interrupted while it waits leaves the
 * rest of the answer to the loop, which reads it and keeps the connection.
 *
 * <pre>{@code
 * LoopHttpClient http = LoopHttpClient.builder(io).readTimeout(Duration.ofSeconds(2)).build();
 * io.spawn(() -> {
 *     try (LoopHttpResponse r = http.exchange(HttpMethod.GET, URI.create("http://localhost:8081/quote"),
 *             new DefaultHttpHeaders(), new byte[0])) {
 *         return new String(r.body().readAllBytes(), StandardCharsets.UTF_8);
 *     }
 * }).join();
 * }</pre>
 *
 * <p>The IOManager must be running when the first call is made. {@link #close()} closes the idle
 * connections.
 */
public final class LoopHttpClient implements AutoCloseable {

    /** Used when no connect timeout is set: Netty's default. */
    public static final Duration DEFAULT_CONNECT_TIMEOUT = Duration.ofSeconds(30);

    /** How long an idle connection waits for reuse before it is closed, unless set otherwise. */
    public static final Duration DEFAULT_IDLE_TIMEOUT = Duration.ofSeconds(30);

    /** Redirects followed for one request, as many as HttpURLConnection's default at most. */
    public static final int MAX_REDIRECTS = 10;

    private final IOManager ioManager;
    private final HttpConnector connector;
    private final Duration connectTimeout;
    private final @Nullable Duration readTimeout;
    private final long readNanos;
    private final long idleNanos;
    private final boolean followRedirects;
    private final Duration idleTimeout;
    private volatile boolean closed;

    private LoopHttpClient(Builder b) {
        this.ioManager = b.io;
        this.connectTimeout = b.connectTimeout;
        this.readTimeout = b.readTimeout;
        this.readNanos = b.readTimeout == null ? 0 : b.readTimeout.toNanos();
        this.followRedirects = b.followRedirects;
        this.idleTimeout = b.idleTimeout;
        this.idleNanos = b.idleTimeout.toNanos();
        this.connector = new HttpConnector(
                b.io, b.connectTimeout, b.idleTimeout, b.sslContext, b.sslProtocols, b.sslCiphers, b.addressFilter);
    }

    /** A client whose connections live on the loops of {@code io}. */
    public static Builder builder(IOManager io) {
        return new Builder(
                Objects.requireNonNull(io, "io: null (expected: the IOManager whose loops carry the connections)"));
    }

    /** The IOManager whose loops carry the connections. */
    public IOManager ioManager() {
        return ioManager;
    }

    long readNanos() {
        return readNanos;
    }

    long idleNanos() {
        return idleNanos;
    }

    /** Its connection pools, resolution, TLS and connecting, for the exchanges. */
    HttpConnector connector() {
        return connector;
    }

    /**
     * The request that answer {@code code} with {@code answer}'s headers redirects {@code call} to, after
     * {@code redirects} redirects already followed; {@code null} when it is not followed (this client's
     * setting, the redirect limit, or not a redirect: {@link HttpCall#redirected}). For the blocking and the
     * asynchronous exchange alike.
     */
    @Nullable
    HttpCall redirect(HttpCall call, int redirects, int code, HttpHeaders answer) {
        return followRedirects && redirects < MAX_REDIRECTS ? call.redirected(code, answer) : null;
    }

    /** Whether {@link #close()} was called: the client takes no more calls. */
    public boolean isClosed() {
        return closed;
    }

    /** Connections opened since this client was made. */
    public long openedConnections() {
        return connector.openedConnections();
    }

    /** Connections open now: in use, idle in a connection pool, or draining the rest of an abandoned response. */
    public long openConnections() {
        return connector.openConnections();
    }

    /** Connections waiting for reuse now, over all loops. */
    public int idleConnections() {
        return connector.idleConnections();
    }

    /**
     * Checks that {@code uri} is one this client can call: http or https, with a host.
     *
     * @throws IllegalArgumentException naming the URI and the rule
     */
    public static void checkUri(URI uri) {
        HttpConnection.Key.of(uri);
    }

    /**
     * Sends one request and parks until the head of its final response has arrived, following
     * redirects when the client does. The body is sent whole, with its length. {@code headers} become
     * the request's own, not copied (a copy per call would cost every call): the client adds
     * {@code Host} unless they have one, sets or removes {@code Content-Length} and removes
     * {@code Transfer-Encoding}. Give each call headers of its own.
     *
     * @throws IOException as the JDK's own HTTP clients throw it (timeouts, refused connections, TLS)
     * @throws IllegalArgumentException if {@code uri} is not http(s) with a host
     */
    public LoopHttpResponse exchange(HttpMethod method, URI uri, HttpHeaders headers, byte[] body) throws IOException {
        if (closed) {
            throw new IOException("LoopHttpClient is closed");
        }
        HttpCall call = new HttpCall(method, uri, headers, body);
        for (int redirects = 0; ; redirects++) {
            LoopHttpResponse response = BlockingExchange.once(connector, call, readNanos, idleNanos);
            HttpCall next = redirect(call, redirects, response.status(), response.headers());
            if (next == null) {
                return response;
            }
            response.close();
            call = next;
        }
    }

    /**
     * Starts one exchange and returns at once: the request goes out, and its answer is read, on the
     * caller's loop ({@link IOManager#currentLoopIndex()}: a coroutine's home loop, a loop thread's own loop;
     * the least loaded one for any other thread), over a connection of that loop's connection pool or a new one
     * opened there without parking anybody. {@code handler} hears of the answer on that loop: its head,
     * then its body as {@link LoopExchange#demand demanded}. Settings, redirects, the retry on a stale
     * pooled connection and the failures are those of {@link #exchange}; the headers become the
     * request's own, as there.
     *
     * @throws IOException when the client is closed or its IOManager is not running
     * @throws IllegalArgumentException if {@code uri} is not http(s) with a host
     */
    public LoopExchange start(HttpMethod method, URI uri, HttpHeaders headers, byte[] body, ExchangeHandler handler)
            throws IOException {
        int loopIndex = ioManager.currentLoopIndex();
        return start(loopIndex >= 0 ? loopIndex : ioManager.loopIndexForCaller(), method, uri, headers, body, handler);
    }

    /**
     * {@link #start(HttpMethod, URI, HttpHeaders, byte[], ExchangeHandler)} on loop {@code loop}: for a
     * caller that chose the loop earlier, on the thread it will be waited on from, and may hand the
     * request over from another thread.
     *
     * @throws IllegalArgumentException if {@code loop} is not one of the IOManager's loops
     */
    public LoopExchange start(
            int loopIndex, HttpMethod method, URI uri, HttpHeaders headers, byte[] body, ExchangeHandler handler)
            throws IOException {
        HttpConnection.Key key = HttpConnection.Key.of(uri); // checks the URI before anything starts
        Objects.requireNonNull(handler, "handler");
        if (closed) {
            throw new IOException("LoopHttpClient is closed");
        }
        HttpConnectionPool[] p = connector.pools();
        if (loopIndex < 0 || loopIndex >= p.length) {
            throw new IllegalArgumentException("loopIndex: " + loopIndex + " (expected: 0 to " + (p.length - 1)
                    + ", a loop of IOManager '" + ioManager.name() + "')");
        }
        LoopExchange exchange =
                new LoopExchange(this, loopIndex, p[loopIndex], new HttpCall(method, uri, headers, body), handler);
        exchange.begin(key);
        return exchange;
    }

    /** Closes the idle connections; the client takes no more calls. */
    @Override
    public void close() {
        closed = true;
        connector.close();
    }

    /** The IOManager's name and the settings, for logs and reports. */
    @Override
    public String toString() {
        return "LoopHttpClient[" + settingsDescription() + "]";
    }

    /** {@code <io>, connect <d>, read <d>, redirects (not) followed}. */
    public String settingsDescription() {
        return ioManager.name() + ", connect " + connectTimeout + ", read "
                + (readTimeout == null ? "unlimited" : readTimeout) + ", redirects "
                + (followRedirects ? "followed" : "not followed") + ", idle " + idleTimeout;
    }

    /** Settings of a {@link LoopHttpClient}; each is checked when it is set, naming itself, its value and the rule. */
    public static final class Builder {
        private final IOManager io;
        private Duration connectTimeout = DEFAULT_CONNECT_TIMEOUT;
        private @Nullable Duration readTimeout;
        private boolean followRedirects = true;
        private @Nullable SSLContext sslContext;
        private String @Nullable [] sslProtocols;
        private String @Nullable [] sslCiphers;
        private @Nullable Predicate<InetAddress> addressFilter;
        private Duration idleTimeout = DEFAULT_IDLE_TIMEOUT;

        private Builder(IOManager io) {
            this.io = io;
        }

        /** Longest time to establish a connection (and its TLS handshake). Default {@link #DEFAULT_CONNECT_TIMEOUT}. */
        public Builder connectTimeout(Duration connectTimeout) {
            this.connectTimeout = Arguments.positive("connectTimeout", connectTimeout);
            return this;
        }

        /** Longest wait for the next part of a response (its head, then each piece of its body); {@code null}: none (default). */
        public Builder readTimeout(@Nullable Duration readTimeout) {
            this.readTimeout = readTimeout == null ? null : Arguments.positive("readTimeout", readTimeout);
            return this;
        }

        /** Whether 301, 302, 303, 307 and 308 answers are followed (never from https to http). Default true. */
        public Builder followRedirects(boolean followRedirects) {
            this.followRedirects = followRedirects;
            return this;
        }

        /** The TLS context for https; {@code null}: the JVM's default {@code SSLContext} (default). */
        public Builder sslContext(@Nullable SSLContext sslContext) {
            this.sslContext = sslContext;
            return this;
        }

        /** TLS protocols to enable; {@code null}: the context's defaults. */
        public Builder sslProtocols(String @Nullable ... protocols) {
            this.sslProtocols = protocols == null ? null : protocols.clone();
            return this;
        }

        /** TLS cipher suites to enable; {@code null}: the context's defaults. */
        public Builder sslCiphers(String @Nullable ... ciphers) {
            this.sslCiphers = ciphers == null ? null : ciphers.clone();
            return this;
        }

        /**
         * Which resolved addresses connections may go to (for example, only external ones); a host none
         * of whose addresses passes fails with an {@code UnknownHostException}. {@code null}: all (default).
         */
        public Builder addressFilter(@Nullable Predicate<InetAddress> addressFilter) {
            this.addressFilter = addressFilter;
            return this;
        }

        /** How long an idle connection is kept for reuse. Default {@link #DEFAULT_IDLE_TIMEOUT}. */
        public Builder idleTimeout(Duration idleTimeout) {
            this.idleTimeout = Arguments.positive("idleTimeout", idleTimeout);
            return this;
        }

        public LoopHttpClient build() {
            return new LoopHttpClient(this);
        }
    }
}
