package io.cosched.spring.http.client.reactive;

import io.netty.buffer.ByteBufAllocator;
import io.netty.handler.codec.http.DefaultHttpHeaders;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.cookie.ClientCookieEncoder;
import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import org.reactivestreams.Publisher;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferFactory;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.core.io.buffer.NettyDataBufferFactory;
import org.springframework.http.HttpCookie;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpMethod;
import org.springframework.http.client.reactive.AbstractClientHttpRequest;
import org.springframework.http.support.Netty4HeadersAdapter;
import reactor.core.publisher.Mono;

/**
 * The request {@code WebClient} writes into: its headers are the Netty headers the exchange sends. A
 * body given as a {@code Mono} (what Spring's encoders make of one value, a form, a {@code bodyValue})
 * is sent whole with its length; any other body (a {@code Flux} streamed, multipart,
 * {@code writeAndFlushWith}) hands the whole exchange to the wrapped connector, which streams it.
 */
final class LoopClientHttpRequest extends AbstractClientHttpRequest {

    private static final NettyDataBufferFactory BUFFERS = new NettyDataBufferFactory(ByteBufAllocator.DEFAULT);

    private final HttpMethod method;
    private final URI uri;
    private final io.netty.handler.codec.http.HttpHeaders nettyHeaders;
    private final LoopClientHttpConnector.Call call;

    private LoopClientHttpRequest(
            HttpMethod method,
            URI uri,
            io.netty.handler.codec.http.HttpHeaders nettyHeaders,
            LoopClientHttpConnector.Call call) {
        super(new HttpHeaders(new Netty4HeadersAdapter(nettyHeaders)));
        this.method = method;
        this.uri = uri;
        this.nettyHeaders = nettyHeaders;
        this.call = call;
    }

    static LoopClientHttpRequest of(HttpMethod method, URI uri, LoopClientHttpConnector.Call call) {
        return new LoopClientHttpRequest(method, uri, new DefaultHttpHeaders(), call);
    }

    @Override
    public HttpMethod getMethod() {
        return method;
    }

    @Override
    public URI getURI() {
        return uri;
    }

    @Override
    public DataBufferFactory bufferFactory() {
        return BUFFERS;
    }

    /** The Netty headers the request goes out with. */
    @Override
    @SuppressWarnings("unchecked")
    public <T> T getNativeRequest() {
        return (T) nettyHeaders;
    }

    @Override
    public Mono<Void> writeWith(Publisher<? extends DataBuffer> body) {
        if (!(body instanceof Mono<? extends DataBuffer> one)) {
            return doCommit(() -> call.handOver(this, r -> r.writeWith(body)));
        }
        return doCommit(() -> one.map(LoopClientHttpRequest::bytes)
                .defaultIfEmpty(NO_BODY)
                .doOnNext(bytes -> call.send(nettyHeaders, bytes))
                .then());
    }

    @Override
    public Mono<Void> writeAndFlushWith(Publisher<? extends Publisher<? extends DataBuffer>> body) {
        return doCommit(() -> call.handOver(this, r -> r.writeAndFlushWith(body)));
    }

    @Override
    public Mono<Void> setComplete() {
        return doCommit(() -> Mono.fromRunnable(() -> call.send(nettyHeaders, NO_BODY)));
    }

    @Override
    protected void applyHeaders() {
        // the headers are the Netty headers already
    }

    @Override
    protected void applyCookies() {
        if (getCookies().isEmpty()) {
            return;
        }
        List<io.netty.handler.codec.http.cookie.Cookie> cookies = new ArrayList<>();
        for (List<HttpCookie> values : getCookies().values()) {
            for (HttpCookie c : values) {
                cookies.add(new io.netty.handler.codec.http.cookie.DefaultCookie(c.getName(), c.getValue()));
            }
        }
        nettyHeaders.add(HttpHeaderNames.COOKIE, ClientCookieEncoder.STRICT.encode(cookies));
    }

    private static final byte[] NO_BODY = new byte[0];

    private static byte[] bytes(DataBuffer buffer) {
        try {
            byte[] bytes = new byte[buffer.readableByteCount()];
            buffer.read(bytes);
            return bytes;
        } finally {
            DataBufferUtils.release(buffer);
        }
    }
}
