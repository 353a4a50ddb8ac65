package io.cosched.spring.web.shedding;

import io.cosched.Internal;
import io.cosched.spring.web.server.Admission;
import io.cosched.spring.web.server.CoroutineRequests;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.ChannelPromise;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.DefaultHttpHeaders;
import io.netty.handler.codec.http.EmptyHttpHeaders;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpStatusClass;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.ReferenceCountUtil;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import org.springframework.web.reactive.HandlerMapping;
import reactor.netty.NettyPipeline;

/**
 * Sheds coroutine requests before WebFlux: while the in-flight limit is reached (and the admission queue,
 * if any, is full), an HTTP/1.1 request that {@link ShedRoutes surely} goes to a coroutine handler is
 * answered 503 (or 429, {@code cosched.web.admission.status}) with {@code Retry-After} (1, or drawn up to {@code cosched.web.retry-after-max}) by a Netty handler right behind the HTTP codec, with a
 * response made once. It never reaches Reactor Netty's request handling, WebFlux's exchange, the
 * filters or the handler lookup, whose cost a request shed after them still paid (7,800 of them a
 * second took the CPU of the requests let in). Counted as shed, as before.
 *
 * <p>A request is answered here only on a connection with no response pending (HTTP pipelining keeps
 * responses in order) and only after the routes are known ({@link #useRoutes}); everything else goes
 * on to WebFlux, where the in-flight limit still holds. HTTP/2 connections are not seen here.
 */
@Internal
public final class EarlyShedding {

    private static final Log LOG = LogFactory.getLog(EarlyShedding.class);

    /** The handler's name in each connection's pipeline. */
    public static final String HANDLER_NAME = "cosched.shed";

    private final Admission admission;
    private final CoroutineRequests requests;
    private final HttpResponseStatus status;
    private final ByteBuf body;
    // read-only once made, shared by every connection: the encoder changes no header of a 503. One of each per
    // Retry-After value (index: seconds - 1)
    private final HttpHeaders[] keepAliveHeaders;
    private final HttpHeaders[] keepAlive10Headers; // HTTP/1.0 keeps a connection only when told so
    private final HttpHeaders[] closeHeaders;
    private volatile @Nullable ShedRoutes routes;

    /** Sheds what {@code requests} would shed, for the routes that surely run as its coroutine requests. */
    public EarlyShedding(CoroutineRequests requests) {
        this.admission = requests.admission();
        this.requests = requests;
        this.status = HttpResponseStatus.valueOf(admission.status().value());
        byte[] bytes = admission.rejectionProblem().getBytes(StandardCharsets.UTF_8);
        this.body = Unpooled.unreleasableBuffer(Unpooled.wrappedBuffer(bytes).asReadOnly());
        int values = admission.retryAfterMaxSeconds();
        this.keepAliveHeaders = new HttpHeaders[values];
        this.keepAlive10Headers = new HttpHeaders[values];
        this.closeHeaders = new HttpHeaders[values];
        for (int i = 0; i < values; i++) {
            keepAliveHeaders[i] = headers(bytes.length, false, i + 1);
            keepAlive10Headers[i] =
                    headers(bytes.length, false, i + 1).set(HttpHeaderNames.CONNECTION, HttpHeaderValues.KEEP_ALIVE);
            closeHeaders[i] = headers(bytes.length, true, i + 1);
        }
    }

    private static HttpHeaders headers(int length, boolean close, int retryAfter) {
        HttpHeaders h = new DefaultHttpHeaders()
                .set(HttpHeaderNames.CONTENT_TYPE, "application/problem+json")
                .set(HttpHeaderNames.CONTENT_LENGTH, length)
                .set(HttpHeaderNames.RETRY_AFTER, retryAfter);
        if (close) {
            h.set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
        }
        return h;
    }

    /**
     * Reads which routes run as coroutines from the application's handler mappings, in their order
     * (call once they are initialized, before the server takes requests); until then nothing is shed here.
     *
     * @param basePath {@code spring.webflux.base-path}; "" for none
     */
    public void useRoutes(List<? extends HandlerMapping> handlerMappings, String basePath) {
        ShedRoutes read = ShedRoutes.of(handlerMappings, requests.selector(), basePath);
        routes = read;
        if (!read.anyCoroutine()) {
            LOG.info(
                    "cosched: no route surely runs as a coroutine; requests over the in-flight limit are shed by WebFlux");
        }
    }

    /**
     * Puts the shedding handler into a server connection's pipeline, right behind Reactor Netty's
     * HTTP/1.1 codec; does nothing on a connection without one (HTTP/2, or a protocol negotiated later).
     */
    public void install(Channel channel) {
        ChannelPipeline pipeline = channel.pipeline();
        if (pipeline.get(NettyPipeline.HttpCodec) != null && pipeline.get(HANDLER_NAME) == null) {
            pipeline.addAfter(NettyPipeline.HttpCodec, HANDLER_NAME, new Handler());
        }
    }

    private boolean sheds(HttpRequest request) {
        ShedRoutes r = routes;
        return r != null
                && admission.full()
                && request.decoderResult().isSuccess()
                && r.isCoroutineRequest(request.method().name(), request.uri());
    }

    /** One connection's: answers shed requests, drops their bodies, and counts responses still owed. */
    private final class Handler extends ChannelDuplexHandler {
        private boolean discarding; // the body of a request answered here is still arriving
        private int pending; // requests passed on whose response has not ended

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            if (discarding) {
                if (msg instanceof HttpContent) {
                    discarding = !(msg instanceof LastHttpContent);
                    ReferenceCountUtil.release(msg);
                    ctx.read(); // the rest of the body, or the next request
                    return;
                }
                discarding = false; // not a body part: the codec started something else
            }
            if (msg instanceof HttpRequest request) {
                if (pending == 0 && sheds(request)) {
                    answer(ctx, request);
                    discarding = !(msg instanceof LastHttpContent);
                    ReferenceCountUtil.release(msg);
                    // Reactor Netty reads on demand (no auto-read) and asks for the next request once a
                    // response is out; it never saw this one, so the asking is ours
                    ctx.read();
                    return;
                }
                pending++;
            }
            ctx.fireChannelRead(msg);
        }

        private void answer(ChannelHandlerContext ctx, HttpRequest request) {
            admission.shedEarly(request.method().name(), request.uri());
            // a client waiting for 100 Continue may or may not send its body now: the connection cannot
            // tell its next request from that body, so it ends with this answer
            boolean keepAlive = HttpUtil.isKeepAlive(request) && !HttpUtil.is100ContinueExpected(request);
            HttpVersion version = request.protocolVersion();
            HttpHeaders[] byRetryAfter =
                    !keepAlive ? closeHeaders : version.isKeepAliveDefault() ? keepAliveHeaders : keepAlive10Headers;
            HttpHeaders headers = byRetryAfter[admission.retryAfterSeconds() - 1];
            FullHttpResponse response =
                    new DefaultFullHttpResponse(version, status, body.duplicate(), headers, EmptyHttpHeaders.INSTANCE);
            if (keepAlive) {
                ctx.writeAndFlush(response, ctx.voidPromise());
            } else {
                ctx.writeAndFlush(response).addListener(ChannelFutureListener.CLOSE);
            }
        }

        @Override
        public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
            if (msg instanceof LastHttpContent
                    && pending > 0
                    && !(msg instanceof HttpResponse response
                            && response.status().codeClass() == HttpStatusClass.INFORMATIONAL)) {
                pending--;
            }
            ctx.write(msg, promise);
        }
    }
}
