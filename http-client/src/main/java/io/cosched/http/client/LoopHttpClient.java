package io.cosched.http.client;

import io.cosched.Arguments;
import io.cosched.IOManager;
import io.cosched.SchedulerStats;
import io.cosched.net.ChannelInbox;
import io.cosched.net.LoopChannels;
import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.netty.handler.codec.http.EmptyHttpHeaders;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpClientCodec;
import io.netty.handler.codec.http.HttpDecoderConfig;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpObject;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.handler.ssl.SslHandler;
import io.netty.util.ReferenceCountUtil;
import org.jspecify.annotations.Nullable;

import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLHandshakeException;
import javax.net.ssl.SSLParameters;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.net.UnknownHostException;
import java.nio.channels.ClosedByInterruptException;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Predicate;

/**
 * A blocking HTTP/1.1 client whose connections are Netty channels on an {@link IOManager}'s event
 * loops. A call made in a coroutine takes a connection of that coroutine's own loop (one pool per
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

    private static final Set<HttpMethod> WITH_BODY = Set.of(HttpMethod.POST, HttpMethod.PUT, HttpMethod.PATCH);

    private final IOManager ioManager;
    private final Duration connectTimeout;
    private final @Nullable Duration readTimeout;
    private final long readNanos;
    private final long idleNanos;
    private final boolean followRedirects;
    private final @Nullable SSLContext sslContext;
    private final String @Nullable [] sslProtocols;
    private final String @Nullable [] sslCiphers;
    private final @Nullable Predicate<InetAddress> addressFilter;
    private final Duration idleTimeout;
    private volatile HttpConnectionPool @Nullable [] pools;
    private volatile boolean closed;
    private final LongAdder opened = new LongAdder();
    private final LongAdder closedConnections = new LongAdder();

    private LoopHttpClient(Builder b) {
        this.ioManager = b.io;
        this.connectTimeout = b.connectTimeout;
        this.readTimeout = b.readTimeout;
        this.readNanos = b.readTimeout == null ? 0 : b.readTimeout.toNanos();
        this.followRedirects = b.followRedirects;
        this.sslContext = b.sslContext;
        this.sslProtocols = b.sslProtocols;
        this.sslCiphers = b.sslCiphers;
        this.addressFilter = b.addressFilter;
        this.idleTimeout = b.idleTimeout;
        this.idleNanos = b.idleTimeout.toNanos();
    }

    /** A client whose connections live on the loops of {@code io}. */
    public static Builder builder(IOManager io) {
        return new Builder(Objects.requireNonNull(io, "io: null (expected: the IOManager whose loops carry the connections)"));
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

    /**
     * The request that answer {@code code} with {@code answer}'s headers redirects {@code call} to, after
     * {@code redirects} redirects already followed; {@code null} when it is not followed (this client's
     * setting, the limit, or not a redirect: {@link HttpCall#redirected}). For the blocking and the
     * asynchronous exchange alike.
     */
    @Nullable HttpCall redirect(HttpCall call, int redirects, int code, HttpHeaders answer) {
        return followRedirects && redirects < MAX_REDIRECTS ? call.redirected(code, answer) : null;
    }

    /** Whether {@link #close()} was called: the client takes no more calls. */
    public boolean isClosed() {
        return closed;
    }

    /** Connections opened since this client was made. */
    public long openedConnections() {
        return opened.sum();
    }

    /** Connections open now: in use, idle in a pool, or draining the rest of an abandoned response. */
    public long openConnections() {
        return opened.sum() - closedConnections.sum();
    }

    /** Connections waiting for reuse now, over all loops. */
    public int idleConnections() {
        HttpConnectionPool[] p = pools;
        int n = 0;
        if (p != null) {
            for (HttpConnectionPool pool : p) {
                n += pool.idleConnections();
            }
        }
        return n;
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
            LoopHttpResponse response = exchangeOnce(call);
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
     * caller's loop ({@link IOManager#currentLoop()}: a coroutine's home loop, a loop thread's own loop;
     * the least loaded one for any other thread), over a connection of that loop's pool or a new one
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
        int loop = ioManager.currentLoop();
        return start(loop >= 0 ? loop : ioManager.loopForCaller(), method, uri, headers, body, handler);
    }

    /**
     * {@link #start(HttpMethod, URI, HttpHeaders, byte[], ExchangeHandler)} on loop {@code loop}: for a
     * caller that chose the loop earlier, on the thread it will be waited on from, and may hand the
     * request over from another thread.
     *
     * @throws IllegalArgumentException if {@code loop} is not one of the IOManager's loops
     */
    public LoopExchange start(int loop, HttpMethod method, URI uri, HttpHeaders headers, byte[] body,
            ExchangeHandler handler) throws IOException {
        HttpConnection.Key key = HttpConnection.Key.of(uri); // checks the URI before anything starts
        Objects.requireNonNull(handler, "handler");
        if (closed) {
            throw new IOException("LoopHttpClient is closed");
        }
        HttpConnectionPool[] p = pools();
        if (loop < 0 || loop >= p.length) {
            throw new IllegalArgumentException("loop: " + loop + " (expected: 0 to " + (p.length - 1) + ", a loop of IOManager '"
                    + ioManager.name() + "')");
        }
        LoopExchange exchange = new LoopExchange(this, loop, p[loop], new HttpCall(method, uri, headers, body), handler);
        exchange.begin(key);
        return exchange;
    }

    /** Closes the idle connections; the client takes no more calls. */
    @Override
    public void close() {
        closed = true;
        HttpConnectionPool[] p = pools;
        if (p != null) {
            for (HttpConnectionPool pool : p) {
                pool.close();
            }
        }
    }

    // ---- one exchange ------------------------------------------------------------------------------

    private LoopHttpResponse exchangeOnce(HttpCall call) throws IOException {
        HttpConnection.Key key = HttpConnection.Key.of(call.uri());
        int loop;
        try {
            loop = ioManager.loopForCaller();
        } catch (IllegalStateException e) {
            throw new IOException(e.getMessage(), e);
        }
        HttpConnectionPool pool = pools()[loop];
        boolean callerKeepsAlive = call.keepsAlive();
        for (;;) {
            HttpConnection c = pool.poll(key);
            if (c == null) {
                c = connect(key, loop, pool);
            }
            // A pooled connection the server closed meanwhile fails before any answer: try the next.
            boolean mayRetry = ++c.uses > 1 && call.idempotent();
            try {
                c.channel.writeAndFlush(request(call, key), c.channel.voidPromise());
                HttpResponse head = readHead(c, readNanos);
                if (head != null) {
                    boolean keepAlive = HttpUtil.isKeepAlive(head) && callerKeepsAlive;
                    return new LoopHttpResponse(pool, c, head, keepAlive, readNanos, idleNanos);
                }
                c.close();
                if (!mayRetry) {
                    throw new SocketException("Unexpected end of file from server");
                }
            } catch (SocketTimeoutException | ClosedByInterruptException e) {
                c.close();
                throw e;
            } catch (InterruptedIOException e) {
                // the caller was interrupted (its request cancelled): the loop reads the answer to its end
                // and keeps the connection
                ResponseDrain.start(c, pool, callerKeepsAlive, idleNanos);
                throw e;
            } catch (IOException e) {
                c.close();
                if (!mayRetry) {
                    throw e;
                }
            }
        }
    }

    /** The pools, made on the first call; the IOManager must be running by then. */
    private HttpConnectionPool[] pools() throws IOException {
        HttpConnectionPool[] p = pools;
        if (p == null) {
            synchronized (this) {
                p = pools;
                if (p == null) {
                    SchedulerStats.State state = ioManager.state();
                    if (state != SchedulerStats.State.RUNNING) {
                        throw new IOException("IOManager '" + ioManager.name() + "' is " + state + " (expected: RUNNING): "
                                + "the connections live on its loops; start it before the first call");
                    }
                    int n = ioManager.threads();
                    p = new HttpConnectionPool[n];
                    for (int i = 0; i < n; i++) {
                        p[i] = new HttpConnectionPool(ioManager.eventLoop(i), idleNanos);
                    }
                    pools = p;
                }
            }
        }
        return p;
    }

    static FullHttpRequest request(HttpCall call, HttpConnection.Key key) {
        URI uri = call.uri();
        String target = uri.getRawPath();
        if (target == null || target.isEmpty()) {
            target = "/";
        }
        if (uri.getRawQuery() != null) {
            target = target + "?" + uri.getRawQuery();
        }
        byte[] body = call.body();
        ByteBuf content = body.length == 0 ? Unpooled.EMPTY_BUFFER : Unpooled.wrappedBuffer(body);
        // the caller's headers are the request's (see exchange): no copy
        FullHttpRequest req = new DefaultFullHttpRequest(HttpVersion.HTTP_1_1, call.method(), target, content, call.headers(),
                EmptyHttpHeaders.INSTANCE);
        HttpHeaders h = req.headers();
        if (!h.contains(HttpHeaderNames.HOST)) {
            h.set(HttpHeaderNames.HOST, key.hostHeader());
        }
        h.remove(HttpHeaderNames.TRANSFER_ENCODING); // the body is sent whole, with its length
        if (body.length > 0 || WITH_BODY.contains(call.method())) {
            h.setInt(HttpHeaderNames.CONTENT_LENGTH, body.length);
        } else {
            h.remove(HttpHeaderNames.CONTENT_LENGTH); // Spring sets 0 for every empty body; a GET has none
        }
        return req;
    }

    /** The head of the final response (interim 1xx answers skipped), or {@code null} if the connection ended first. */
    private static @Nullable HttpResponse readHead(HttpConnection c, long readNanos) throws IOException {
        for (;;) {
            Object msg = c.inbox.take(readNanos);
            if (msg == null) {
                return null;
            }
            checkDecoded(c, msg);
            if (msg instanceof HttpResponse head) {
                int code = head.status().code();
                if (code >= 100 && code < 200 && code != 101) {
                    skipRest(c, readNanos); // 100 Continue, 103 Early Hints: the answer follows
                    continue;
                }
                return head;
            }
            ReferenceCountUtil.release(msg);
            throw new IOException("HTTP response from " + c.key + " without a status line");
        }
    }

    private static void skipRest(HttpConnection c, long readNanos) throws IOException {
        for (;;) {
            Object msg = c.inbox.take(readNanos);
            if (msg == null) {
                return;
            }
            checkDecoded(c, msg);
            boolean last = msg instanceof LastHttpContent;
            ReferenceCountUtil.release(msg);
            if (last) {
                return;
            }
        }
    }

    /** A response the codec could not decode (or one cut short) ends the connection. */
    static void checkDecoded(HttpConnection c, Object msg) throws IOException {
        if (msg instanceof HttpObject o && o.decoderResult().isFailure()) {
            Throwable cause = o.decoderResult().cause();
            ReferenceCountUtil.release(msg);
            c.close();
            throw new IOException("invalid HTTP response from " + c.key + ": " + cause.getMessage(), cause);
        }
    }

    // ---- connections -------------------------------------------------------------------------------

    private HttpConnection connect(HttpConnection.Key key, int loop, HttpConnectionPool pool) throws IOException {
        InetAddress address = resolve(key.host());
        ChannelInbox inbox = newInbox();
        SslHandler ssl = key.tls() ? sslHandler(key) : null;
        Channel ch = LoopChannels.connect(bootstrap(loop, inbox, ssl), new InetSocketAddress(address, key.port()), null);
        HttpConnection c = opened(key, loop, ch, inbox, pool);
        if (ssl != null) {
            LoopChannels.await(ssl.handshakeFuture(), ch);
            if (!ssl.handshakeFuture().isSuccess()) {
                c.close();
                throw handshakeFailed(key, ssl.handshakeFuture().cause());
            }
        }
        return c;
    }

    /** The inbox of a new connection: a reader that gives up leaves it open, to be drained and pooled. */
    static ChannelInbox newInbox() {
        return new ChannelInbox(ChannelInbox.DEFAULT_HIGH_WATER, ChannelInbox.DEFAULT_LOW_WATER, false);
    }

    /** A bootstrap for a new connection on {@code loop}: TLS when {@code ssl} is given, the HTTP codec, the inbox. */
    Bootstrap bootstrap(int loop, ChannelInbox inbox, @Nullable SslHandler ssl) {
        return ioManager.bootstrap(loop)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) Math.min(Integer.MAX_VALUE, connectTimeout.toMillis()))
                .option(ChannelOption.TCP_NODELAY, true)
                .option(ChannelOption.SO_KEEPALIVE, true)
                .handler(new ChannelInitializer<Channel>() {
                    @Override
                    protected void initChannel(Channel ch) {
                        if (ssl != null) {
                            ch.pipeline().addLast(ssl);
                        }
                        ch.pipeline().addLast(new HttpClientCodec(new HttpDecoderConfig()
                                .setMaxHeaderSize(64 * 1024).setMaxChunkSize(64 * 1024), false, false), inbox);
                    }
                });
    }

    /** A connection just opened: counted, and forgotten by its pool when it closes. */
    HttpConnection opened(HttpConnection.Key key, int loop, Channel ch, ChannelInbox inbox, HttpConnectionPool pool) {
        HttpConnection c = new HttpConnection(key, loop, ch, inbox);
        opened.increment();
        ch.closeFuture().addListener(f -> {
            closedConnections.increment();
            pool.closed(c);
        });
        return c;
    }

    static SSLHandshakeException handshakeFailed(HttpConnection.Key key, Throwable cause) {
        SSLHandshakeException e = new SSLHandshakeException("TLS handshake with " + key + " failed: " + cause.getMessage());
        e.initCause(cause);
        return e;
    }

    InetAddress resolve(String host) throws UnknownHostException {
        Predicate<InetAddress> filter = addressFilter;
        if (filter == null) {
            return InetAddress.getByName(host);
        }
        for (InetAddress a : InetAddress.getAllByName(host)) {
            if (filter.test(a)) {
                return a;
            }
        }
        throw new UnknownHostException(host + ": none of its addresses is allowed by the address filter");
    }

    SslHandler sslHandler(HttpConnection.Key key) throws IOException {
        SSLContext ctx = sslContext;
        if (ctx == null) {
            try {
                ctx = SSLContext.getDefault();
            } catch (NoSuchAlgorithmException e) {
                throw new IOException("no default SSLContext for " + key, e);
            }
        }
        SSLEngine engine = ctx.createSSLEngine(key.host(), key.port()); // the host name goes out as SNI
        engine.setUseClientMode(true);
        SSLParameters params = engine.getSSLParameters();
        params.setEndpointIdentificationAlgorithm("HTTPS"); // the certificate must name the host
        if (sslProtocols != null) {
            params.setProtocols(sslProtocols);
        }
        if (sslCiphers != null) {
            params.setCipherSuites(sslCiphers);
        }
        engine.setSSLParameters(params);
        SslHandler handler = new SslHandler(engine);
        handler.setHandshakeTimeoutMillis(connectTimeout.toMillis());
        return handler;
    }

    /** The IOManager's name and the settings, for logs and reports. */
    @Override
    public String toString() {
        return "LoopHttpClient[" + settingsDescription() + "]";
    }

    /** {@code <io>, connect <d>, read <d>, redirects (not) followed}. */
    public String settingsDescription() {
        return ioManager.name() + ", connect " + connectTimeout + ", read " + (readTimeout == null ? "unlimited" : readTimeout)
                + ", redirects " + (followRedirects ? "followed" : "not followed") + ", idle " + idleTimeout;
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
