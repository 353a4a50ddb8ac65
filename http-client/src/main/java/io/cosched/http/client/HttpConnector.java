package io.cosched.http.client;

import io.cosched.IOManager;
import io.cosched.SchedulerStats;
import io.cosched.netty.NettyBlocking;
import io.cosched.netty.NettyInbox;
import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.handler.codec.http.HttpClientCodec;
import io.netty.handler.codec.http.HttpDecoderConfig;
import io.netty.handler.ssl.SslHandler;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Predicate;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLHandshakeException;
import javax.net.ssl.SSLParameters;
import org.jspecify.annotations.Nullable;

/**
 * How a {@link LoopHttpClient} reaches servers, for its blocking and its asynchronous exchange alike: the connection pools
 * (one per loop, made at the first call), name resolution through the address filter, TLS, opening a connection
 * on a loop, and the count of connections opened and closed.
 */
final class HttpConnector {

    private final IOManager io;
    private final Duration connectTimeout;
    private final long idleNanos;
    private final @Nullable SSLContext sslContext;
    private final String @Nullable [] sslProtocols;
    private final String @Nullable [] sslCiphers;
    private final @Nullable Predicate<InetAddress> addressFilter;
    private volatile HttpConnectionPool @Nullable [] pools;
    private final LongAdder opened = new LongAdder();
    private final LongAdder closedConnections = new LongAdder();

    HttpConnector(
            IOManager io,
            Duration connectTimeout,
            Duration idleTimeout,
            @Nullable SSLContext sslContext,
            String @Nullable [] sslProtocols,
            String @Nullable [] sslCiphers,
            @Nullable Predicate<InetAddress> addressFilter) {
        this.io = io;
        this.connectTimeout = connectTimeout;
        this.idleNanos = idleTimeout.toNanos();
        this.sslContext = sslContext;
        this.sslProtocols = sslProtocols;
        this.sslCiphers = sslCiphers;
        this.addressFilter = addressFilter;
    }

    IOManager io() {
        return io;
    }

    long openedConnections() {
        return opened.sum();
    }

    long openConnections() {
        return opened.sum() - closedConnections.sum();
    }

    int idleConnections() {
        HttpConnectionPool[] p = pools;
        int n = 0;
        if (p != null) {
            for (HttpConnectionPool pool : p) {
                n += pool.idleConnections();
            }
        }
        return n;
    }

    /** Closes the idle connections of every connection pool. */
    void close() {
        HttpConnectionPool[] p = pools;
        if (p != null) {
            for (HttpConnectionPool pool : p) {
                pool.close();
            }
        }
    }

    /** The connection pools, made on the first call; the IOManager must be running by then. */
    HttpConnectionPool[] pools() throws IOException {
        HttpConnectionPool[] p = pools;
        if (p == null) {
            synchronized (this) {
                p = pools;
                if (p == null) {
                    SchedulerStats.State state = io.state();
                    if (state != SchedulerStats.State.RUNNING) {
                        throw new IOException("IOManager '" + io.name() + "' is " + state + " (expected: RUNNING): "
                                + "the connections live on its loops; start it before the first call");
                    }
                    int n = io.threads();
                    p = new HttpConnectionPool[n];
                    for (int i = 0; i < n; i++) {
                        p[i] = new HttpConnectionPool(io.eventLoop(i), idleNanos);
                    }
                    pools = p;
                }
            }
        }
        return p;
    }

    /** A new connection to {@code key} on {@code loop}, TLS handshake done; the caller parks until then. */
    HttpConnection connect(HttpConnection.Key key, int loopIndex, HttpConnectionPool pool) throws IOException {
        InetAddress address = resolve(key.host());
        NettyInbox inbox = newInbox();
        SslHandler ssl = key.tls() ? sslHandler(key) : null;
        Channel ch = NettyBlocking.connect(
                bootstrap(loopIndex, inbox, ssl), new InetSocketAddress(address, key.port()), null);
        HttpConnection c = opened(key, loopIndex, ch, inbox, pool);
        if (ssl != null) {
            NettyBlocking.await(ssl.handshakeFuture(), ch);
            if (!ssl.handshakeFuture().isSuccess()) {
                c.close();
                throw handshakeFailed(key, ssl.handshakeFuture().cause());
            }
        }
        return c;
    }

    /** The inbox of a new connection: a reader that gives up leaves it open, to be drained and pooled. */
    static NettyInbox newInbox() {
        return new NettyInbox(NettyInbox.DEFAULT_HIGH_WATER, NettyInbox.DEFAULT_LOW_WATER, false);
    }

    /** A bootstrap for a new connection on {@code loop}: TLS when {@code ssl} is given, the HTTP codec, the inbox. */
    Bootstrap bootstrap(int loopIndex, NettyInbox inbox, @Nullable SslHandler ssl) {
        return io.bootstrap(loopIndex)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int)
                        Math.min(Integer.MAX_VALUE, connectTimeout.toMillis()))
                .option(ChannelOption.TCP_NODELAY, true)
                .option(ChannelOption.SO_KEEPALIVE, true)
                .handler(new ChannelInitializer<Channel>() {
                    @Override
                    protected void initChannel(Channel ch) {
                        if (ssl != null) {
                            ch.pipeline().addLast(ssl);
                        }
                        ch.pipeline()
                                .addLast(
                                        new HttpClientCodec(
                                                new HttpDecoderConfig()
                                                        .setMaxHeaderSize(64 * 1024)
                                                        .setMaxChunkSize(64 * 1024),
                                                false,
                                                false),
                                        inbox);
                    }
                });
    }

    /** A connection just opened: counted, and forgotten by its connection pool when it closes. */
    HttpConnection opened(
            HttpConnection.Key key, int loopIndex, Channel ch, NettyInbox inbox, HttpConnectionPool pool) {
        HttpConnection c = new HttpConnection(key, loopIndex, ch, inbox);
        opened.increment();
        ch.closeFuture().addListener(f -> {
            closedConnections.increment();
            pool.closed(c);
        });
        return c;
    }

    /** What a failed TLS handshake with {@code key} is thrown as. */
    static SSLHandshakeException handshakeFailed(HttpConnection.Key key, Throwable cause) {
        SSLHandshakeException e =
                new SSLHandshakeException("TLS handshake with " + key + " failed: " + cause.getMessage());
        e.initCause(cause);
        return e;
    }

    /** The address of {@code host} that connections go to: the first the address filter allows. */
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

    /** A client-side TLS handler for {@code key}: SNI and the host name checked against the certificate. */
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
}
