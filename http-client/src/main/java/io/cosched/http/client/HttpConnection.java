package io.cosched.http.client;

import io.cosched.netty.NettyInbox;
import io.netty.channel.Channel;
import io.netty.handler.codec.http.HttpObject;
import io.netty.util.ReferenceCountUtil;
import java.io.IOException;
import java.net.URI;
import java.util.Locale;

/**
 * One HTTP/1.1 connection: a channel on one event loop, its inbox, and where it leads. Used by one
 * exchange at a time; between exchanges it waits in its loop's {@link HttpConnectionPool}.
 */
final class HttpConnection {

    /** Where a connection leads: connections are reused only for the same scheme, host and port. */
    record Key(boolean tls, String host, int port) {

        static Key of(URI uri) {
            String scheme = uri.getScheme();
            boolean tls = "https".equalsIgnoreCase(scheme);
            if (!tls && !"http".equalsIgnoreCase(scheme)) {
                throw new IllegalArgumentException("uri: " + uri + " (expected: an http or https URI)");
            }
            String host = uri.getHost();
            if (host == null) {
                throw new IllegalArgumentException("uri: " + uri + " (expected: a URI with a host)");
            }
            if (host.startsWith("[") && host.endsWith("]")) {
                host = host.substring(1, host.length() - 1); // IPv6 literal
            }
            int port = uri.getPort() >= 0 ? uri.getPort() : tls ? 443 : 80;
            return new Key(tls, host.toLowerCase(Locale.ROOT), port);
        }

        /** The Host header: the port only when it is not the scheme's default. */
        String hostHeader() {
            String h = host.indexOf(':') >= 0 ? "[" + host + "]" : host;
            return port == (tls ? 443 : 80) ? h : h + ":" + port;
        }

        @Override
        public String toString() {
            return (tls ? "https://" : "http://") + hostHeader();
        }
    }

    final Key key;
    final int loopIndex;
    final Channel channel;
    final NettyInbox inbox;
    /** Exchanges begun on this connection; above 1 it came from the connection pool and may have gone stale. */
    int uses;
    /** When it last went back to its connection pool, by {@link System#nanoTime()}; guarded by that pool. */
    long idleSince;
    /** Whether it waits in its connection pool (guarded by that pool); a connection in use is not the pool's to close. */
    boolean pooled;

    HttpConnection(Key key, int loopIndex, Channel channel, NettyInbox inbox) {
        this.key = key;
        this.loopIndex = loopIndex;
        this.channel = channel;
        this.inbox = inbox;
    }

    /** Whether it can carry another exchange: open, and nothing arrived that no request asked for. */
    boolean isReusable() {
        return channel.isActive() && !inbox.isEnded() && inbox.isEmpty();
    }

    void close() {
        channel.close();
        inbox.discard();
    }

    @Override
    public String toString() {
        return "HttpConnection[" + key + ", loop " + loopIndex + ", " + channel + "]";
    }

    /** A response the codec could not decode (or one cut short) ends the connection. */
    void checkDecoded(Object msg) throws IOException {
        if (msg instanceof HttpObject o && o.decoderResult().isFailure()) {
            Throwable cause = o.decoderResult().cause();
            ReferenceCountUtil.release(msg);
            close();
            throw new IOException("invalid HTTP response from " + key + ": " + cause.getMessage(), cause);
        }
    }
}
