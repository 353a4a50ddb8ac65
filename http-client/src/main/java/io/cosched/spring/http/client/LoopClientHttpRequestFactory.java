package io.cosched.spring.http.client;

import io.cosched.Arguments;
import io.cosched.IOManager;
import io.cosched.net.ChannelInbox;
import io.cosched.net.LoopChannels;
import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpClientCodec;
import io.netty.handler.codec.http.HttpDecoderConfig;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpObject;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.handler.ssl.SslHandler;
import io.netty.util.ReferenceCountUtil;
import org.jspecify.annotations.Nullable;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpMethod;
import org.springframework.http.client.ClientHttpRequest;
import org.springframework.http.client.ClientHttpRequestFactory;

import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLHandshakeException;
import javax.net.ssl.SSLParameters;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketException;
import java.io.InterruptedIOException;
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
 * Spring's blocking HTTP client ({@code RestClient}, {@code RestTemplate}) over HTTP/1.1
 * connections that are Netty channels on an {@link IOManager}'s event loops. A call made in a
 * coroutine takes a connection of that coroutine's own loop (one pool per loop, a new connection on
 * that loop when none is idle) and parks until the response arrives, so the loop that reads it is
 * the thread that resumes the coroutine; no other thread takes part. Called from any other thread
 * it simply blocks that thread.
 *
 * <p>Like Spring's other request factories: a connect timeout is a
 * {@code SocketTimeoutException("Connect timed out")}, a read timeout (the longest wait for the next
 * part of the response) a {@code SocketTimeoutException("Read timed out")}, a refused connection a
 * {@code ConnectException}; {@code RestClient} reports each as a {@code ResourceAccessException}.
 * Redirects are followed (at most {@value #MAX_REDIRECTS}) unless turned off. Request bodies are
 * buffered. A request that fails on a pooled connection the server had closed before any answer
 * is sent again on a new one when its method is idempotent.
 *
 * <p>Settings are read when a request is made; set them before handing the factory out. The first
 * request starts the IOManager if nobody has yet (a call made while the application starts).
 * {@link #close()} closes the idle connections.
 */
public final class LoopClientHttpRequestFactory implements ClientHttpRequestFactory, AutoCloseable {

    /** Used when no connect timeout is set: Netty's default. */
    public static final Duration DEFAULT_CONNECT_TIMEOUT = Duration.ofSeconds(30);

    /** How long an idle connection waits for reuse before it is closed, unless set otherwise. */
    public static final Duration DEFAULT_IDLE_TIMEOUT = Duration.ofSeconds(30);

    /** Redirects followed for one request, as many as HttpURLConnection's default at most. */
    public static final int MAX_REDIRECTS = 10;

    private static final Set<HttpMethod> IDEMPOTENT = Set.of(HttpMethod.GET, HttpMethod.HEAD, HttpMethod.OPTIONS,
            HttpMethod.TRACE, HttpMethod.PUT, HttpMethod.DELETE);
    private static final Set<HttpMethod> WITH_BODY = Set.of(HttpMethod.POST, HttpMethod.PUT, HttpMethod.PATCH);

    private final IOManager ioManager;
    private volatile Duration connectTimeout = DEFAULT_CONNECT_TIMEOUT;
    private volatile @Nullable Duration readTimeout;
    private volatile boolean followRedirects = true;
    private volatile @Nullable SSLContext sslContext;
    private volatile String @Nullable [] sslProtocols;
    private volatile String @Nullable [] sslCiphers;
    private volatile @Nullable Predicate<InetAddress> addressFilter;
    private volatile Duration idleTimeout = DEFAULT_IDLE_TIMEOUT;
    private volatile HttpConnectionPool @Nullable [] pools;
    private volatile boolean closed;
    private final LongAdder opened = new LongAdder();
    private final LongAdder closedConnections = new LongAdder();

    /** Connections on the loops of {@code io}. */
    public LoopClientHttpRequestFactory(IOManager io) {
        this.ioManager = Objects.requireNonNull(io, "io: null (expected: the IOManager whose loops carry the connections)");
    }

    /** Longest time to establish a connection (and its TLS handshake). Default {@link #DEFAULT_CONNECT_TIMEOUT}. */
    public void setConnectTimeout(Duration connectTimeout) {
        this.connectTimeout = Arguments.positive("connectTimeout", connectTimeout);
    }

    /** Longest wait for the next part of a response (its head, then each piece of its body); {@code null}: none (default). */
    public void setReadTimeout(@Nullable Duration readTimeout) {
        this.readTimeout = readTimeout == null ? null : Arguments.positive("readTimeout", readTimeout);
    }

    /** Whether 301, 302, 303, 307 and 308 answers are followed (never from https to http). Default true. */
    public void setFollowRedirects(boolean followRedirects) {
        this.followRedirects = followRedirects;
    }

    /** The TLS context for https; {@code null}: the JVM's default {@code SSLContext} (default). */
    public void setSslContext(@Nullable SSLContext sslContext) {
        this.sslContext = sslContext;
    }

    /** TLS protocols to enable; {@code null}: the context's defaults. */
    public void setSslProtocols(String @Nullable ... protocols) {
        this.sslProtocols = protocols == null ? null : protocols.clone();
    }

    /** TLS cipher suites to enable; {@code null}: the context's defaults. */
    public void setSslCiphers(String @Nullable ... ciphers) {
        this.sslCiphers = ciphers == null ? null : ciphers.clone();
    }

    /**
     * Which resolved addresses connections may go to (for example, only external ones); a host none
     * of whose addresses passes fails with an {@code UnknownHostException}. {@code null}: all (default).
     */
    public void setAddressFilter(@Nullable Predicate<InetAddress> addressFilter) {
        this.addressFilter = addressFilter;
    }

    /** How long an idle connection is kept for reuse. Default {@link #DEFAULT_IDLE_TIMEOUT}; set it before the first request. */
    public void setIdleTimeout(Duration idleTimeout) {
        this.idleTimeout = Arguments.positive("idleTimeout", idleTimeout);
    }

    /** The IOManager whose loops carry the connections. */
    public IOManager ioManager() {
        return ioManager;
    }

    boolean followsRedirects() {
        return followRedirects;
    }

    /** Connections opened since this factory was made. */
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

    @Override
    public ClientHttpRequest createRequest(URI uri, HttpMethod httpMethod) throws IOException {
        if (closed) {
            throw new IOException("LoopClientHttpRequestFactory is closed");
        }
        HttpConnection.Key.of(uri); // an http(s) URI with a host, or an IllegalArgumentException now
        return new LoopClientHttpRequest(this, uri, httpMethod);
    }

    /** Closes the idle connections; the factory takes no more requests. */
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

    /** Sends one request and parks until the head of its response has arrived. */
    LoopClientHttpResponse exchange(HttpMethod method, URI uri, HttpHeaders headers, byte[] body) throws IOException {
        HttpConnection.Key key = HttpConnection.Key.of(uri);
        int loop;
        try {
            loop = ioManager.loopForCaller();
        } catch (IllegalStateException e) {
            throw new IOException(e.getMessage(), e);
        }
        HttpConnectionPool pool = pools()[loop];
        long readNanos = readTimeout == null ? 0 : readTimeout.toNanos();
        for (;;) {
            HttpConnection c = pool.poll(key);
            if (c == null) {
                c = connect(key, loop, pool);
            }
            // A pooled connection the server closed meanwhile fails before any answer: try the next.
            boolean mayRetry = ++c.uses > 1 && IDEMPOTENT.contains(method);
            try {
                c.channel.writeAndFlush(request(method, uri, key, headers, body), c.channel.voidPromise());
                HttpResponse head = readHead(c, readNanos);
                if (head != null) {
                    boolean keepAlive = HttpUtil.isKeepAlive(head) && !"close".equalsIgnoreCase(headers.getFirst("Connection"));
                    return new LoopClientHttpResponse(pool, c, head, keepAlive, readNanos, idleTimeout.toNanos());
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
                ResponseDrain.start(c, pool, !"close".equalsIgnoreCase(headers.getFirst("Connection")), idleTimeout.toNanos());
                throw e;
            } catch (IOException e) {
                c.close();
                if (!mayRetry) {
                    throw e;
                }
            }
        }
    }

    /** The pools, made on the first request, which also starts the IOManager if nobody has yet. */
    private HttpConnectionPool[] pools() throws IOException {
        HttpConnectionPool[] p = pools;
        if (p == null) {
            synchronized (this) {
                p = pools;
                if (p == null) {
                    try {
                        ioManager.start(); // a call made while the application context is still starting
                    } catch (IllegalStateException stopped) {
                        throw new IOException(stopped.getMessage(), stopped);
                    }
                    int n = ioManager.stats().threads();
                    p = new HttpConnectionPool[n];
                    for (int i = 0; i < n; i++) {
                        p[i] = new HttpConnectionPool(ioManager.eventLoop(i), idleTimeout.toNanos());
                    }
                    pools = p;
                }
            }
        }
        return p;
    }

    private static FullHttpRequest request(HttpMethod method, URI uri, HttpConnection.Key key, HttpHeaders headers,
            byte[] body) {
        String target = uri.getRawPath();
        if (target == null || target.isEmpty()) {
            target = "/";
        }
        if (uri.getRawQuery() != null) {
            target = target + "?" + uri.getRawQuery();
        }
        ByteBuf content = body.length == 0 ? Unpooled.EMPTY_BUFFER : Unpooled.wrappedBuffer(body);
        FullHttpRequest req = new DefaultFullHttpRequest(HttpVersion.HTTP_1_1,
                io.netty.handler.codec.http.HttpMethod.valueOf(method.name()), target, content);
        io.netty.handler.codec.http.HttpHeaders h = req.headers();
        headers.forEach((name, values) -> {
            for (String v : values) {
                h.add(name, v);
            }
        });
        if (!h.contains(HttpHeaderNames.HOST)) {
            h.set(HttpHeaderNames.HOST, key.hostHeader());
        }
        h.remove(HttpHeaderNames.TRANSFER_ENCODING); // the body is sent whole, with its length
        if (body.length > 0 || WITH_BODY.contains(method)) {
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
        // an interrupted caller leaves the connection open: the rest of the response is drained and it is pooled
        ChannelInbox inbox = new ChannelInbox(ChannelInbox.DEFAULT_HIGH_WATER, ChannelInbox.DEFAULT_LOW_WATER, false);
        SslHandler ssl = key.tls() ? sslHandler(key) : null;
        Bootstrap b = ioManager.bootstrap(loop)
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
        Channel ch = LoopChannels.connect(b, new InetSocketAddress(address, key.port()), null);
        HttpConnection c = new HttpConnection(key, loop, ch, inbox);
        opened.increment();
        ch.closeFuture().addListener(f -> {
            closedConnections.increment();
            pool.closed(c);
        });
        if (ssl != null) {
            LoopChannels.await(ssl.handshakeFuture(), ch);
            if (!ssl.handshakeFuture().isSuccess()) {
                c.close();
                Throwable cause = ssl.handshakeFuture().cause();
                SSLHandshakeException e = new SSLHandshakeException("TLS handshake with " + key + " failed: "
                        + cause.getMessage());
                e.initCause(cause);
                throw e;
            }
        }
        return c;
    }

    private InetAddress resolve(String host) throws UnknownHostException {
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

    private SslHandler sslHandler(HttpConnection.Key key) throws IOException {
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
        String[] protocols = sslProtocols;
        if (protocols != null) {
            params.setProtocols(protocols);
        }
        String[] ciphers = sslCiphers;
        if (ciphers != null) {
            params.setCipherSuites(ciphers);
        }
        engine.setSSLParameters(params);
        SslHandler handler = new SslHandler(engine);
        handler.setHandshakeTimeoutMillis(connectTimeout.toMillis());
        return handler;
    }

    @Override
    public String toString() {
        return "LoopClientHttpRequestFactory[" + ioManager.name() + ", connect " + connectTimeout + ", read "
                + (readTimeout == null ? "unlimited" : readTimeout) + ", redirects " + (followRedirects ? "followed" : "not followed")
                + "]";
    }
}
