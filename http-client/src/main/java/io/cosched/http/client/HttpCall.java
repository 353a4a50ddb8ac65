package io.cosched.http.client;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.netty.handler.codec.http.EmptyHttpHeaders;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpVersion;
import java.net.URI;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * One request as the client sends it: method, target, headers (the request's own, not copied) and the
 * whole body. A redirect makes the next one; the blocking and the asynchronous exchange follow them alike.
 */
record HttpCall(HttpMethod method, URI uri, HttpHeaders headers, byte[] body) {

    static final byte[] NO_BODY = new byte[0];

    private static final Set<HttpMethod> WITH_BODY = Set.of(HttpMethod.POST, HttpMethod.PUT, HttpMethod.PATCH);

    private static final Set<HttpMethod> IDEMPOTENT = Set.of(
            HttpMethod.GET, HttpMethod.HEAD, HttpMethod.OPTIONS, HttpMethod.TRACE, HttpMethod.PUT, HttpMethod.DELETE);

    /** Whether it may be sent again when a pooled connection turns out closed before any answer. */
    boolean idempotent() {
        return IDEMPOTENT.contains(method);
    }

    /** Whether the caller lets the connection be kept after this exchange. */
    boolean keepsAlive() {
        return !headers.containsValue(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE, true);
    }

    /**
     * The request the answer {@code code} with {@code answer}'s headers redirects this one to, or
     * {@code null} when it is not a redirect to follow: 301, 302, 303, 307 or 308 with a
     * {@code Location} of http(s) with a host, never from https to http. A 303 (and a 301 or 302 to a
     * POST) becomes a GET without body; credentials go only to the first server.
     */
    @Nullable
    HttpCall redirected(int code, HttpHeaders answer) {
        if (code != 301 && code != 302 && code != 303 && code != 307 && code != 308) {
            return null;
        }
        String location = answer.get(HttpHeaderNames.LOCATION);
        if (location == null || location.isBlank()) {
            return null;
        }
        URI next;
        try {
            next = uri.resolve(location.trim());
        } catch (IllegalArgumentException malformed) {
            return null; // handed to the caller as it is
        }
        String scheme = next.getScheme();
        if (!"http".equalsIgnoreCase(scheme) && !"https".equalsIgnoreCase(scheme) || next.getHost() == null) {
            return null;
        }
        if ("https".equalsIgnoreCase(uri.getScheme()) && "http".equalsIgnoreCase(scheme)) {
            return null; // never from TLS to plain text
        }
        boolean toGet = code == 303 && !HttpMethod.HEAD.equals(method)
                || (code == 301 || code == 302) && HttpMethod.POST.equals(method);
        HttpHeaders h = headers.copy();
        h.remove(HttpHeaderNames.HOST);
        HttpMethod m = method;
        byte[] b = body;
        if (toGet) {
            m = HttpMethod.GET;
            b = NO_BODY;
            h.remove(HttpHeaderNames.CONTENT_LENGTH);
            h.remove(HttpHeaderNames.CONTENT_TYPE);
        }
        if (!HttpConnection.Key.of(uri).equals(HttpConnection.Key.of(next))) {
            // credentials were meant for the first server only
            h.remove(HttpHeaderNames.AUTHORIZATION);
            h.remove(HttpHeaderNames.PROXY_AUTHORIZATION);
            h.remove(HttpHeaderNames.COOKIE);
        }
        return new HttpCall(m, next, h, b);
    }

    /** The request as it goes out on a connection to {@code key}: the headers are this call's own, not copied. */
    FullHttpRequest toRequest(HttpConnection.Key key) {
        URI uri = this.uri;
        String target = uri.getRawPath();
        if (target == null || target.isEmpty()) {
            target = "/";
        }
        if (uri.getRawQuery() != null) {
            target = target + "?" + uri.getRawQuery();
        }
        byte[] body = this.body;
        ByteBuf content = body.length == 0 ? Unpooled.EMPTY_BUFFER : Unpooled.wrappedBuffer(body);
        // the caller's headers are the request's (see exchange): no copy
        FullHttpRequest req = new DefaultFullHttpRequest(
                HttpVersion.HTTP_1_1, method, target, content, headers, EmptyHttpHeaders.INSTANCE);
        HttpHeaders h = req.headers();
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
}
