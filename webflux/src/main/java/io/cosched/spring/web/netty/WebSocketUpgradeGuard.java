package io.cosched.spring.web.netty;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.CompositeByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.ChannelPromise;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.util.ReferenceCountUtil;
import java.util.ArrayDeque;
import java.util.Objects;
import org.jspecify.annotations.Nullable;
import reactor.netty.NettyPipeline;
import reactor.netty.channel.ChannelOperations;
import reactor.netty.http.websocket.WebsocketInbound;

/**
 * Keeps the WebSocket frames a client sends together with its upgrade request. Without it the server's HTTP decoder
 * goes on decoding the bytes that follow the request as HTTP, and discards them as a malformed request before the
 * handshake has put the WebSocket decoder in its place: a client that sends its first messages without waiting for
 * the 101 loses them (with or without cosched, on the loop or off it).
 *
 * <p>A shared watch sits after the HTTP codec of each connection; on an upgrade request the guard takes its place and
 * the codec's decoder out, so that what follows comes
 * here as bytes, and holds those until the handshake's 101 has gone out and Reactor Netty has bound its WebSocket
 * operations (a handshake called off the loop binds them a task later); it then feeds them in again from the
 * pipeline's head, where the WebSocket decoder now reads them first, and leaves. An upgrade refused (any answer but
 * 101) closes the connection after its answer, since what followed the request was not HTTP; so does a client that
 * sends more than 1 MiB before the answer.
 */
public final class WebSocketUpgradeGuard extends ChannelDuplexHandler {

    static final String NAME = "cosched.webSocketUpgrade";

    /** What a client may send ahead of the handshake's answer; more closes the connection. */
    static final int MAX_EARLY_BYTES = 1024 * 1024;

    private boolean holding = true; // what follows the upgrade request is not fed in yet
    private boolean upgraded; // its 101 has gone out
    private @Nullable CompositeByteBuf early; // bytes that came after it
    private final ArrayDeque<Object> later = new ArrayDeque<>(); // anything else after it, in order

    private static final Detector DETECTOR = new Detector();

    private WebSocketUpgradeGuard() {}

    /**
     * Adds the guard's watch to a new connection of Reactor Netty's HTTP/1.1 server (other pipelines are left alone):
     * one shared handler that only reads, so that a request pays a header lookup and a response nothing; the guard
     * itself takes its place on an upgrade request.
     */
    public static void install(Channel channel) {
        ChannelPipeline pipeline = channel.pipeline();
        if (pipeline.get(NettyPipeline.HttpCodec) instanceof HttpServerCodec && pipeline.get(NAME) == null) {
            pipeline.addAfter(NettyPipeline.HttpCodec, NAME, DETECTOR);
        }
    }

    /** Watches the requests of a connection for a WebSocket upgrade; writes do not pass through it. */
    @ChannelHandler.Sharable
    private static final class Detector extends ChannelInboundHandlerAdapter {
        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            if (msg instanceof HttpRequest request && isWebSocketUpgrade(request)) {
                WebSocketUpgradeGuard guard = new WebSocketUpgradeGuard();
                ctx.pipeline().replace(this, NAME, guard);
                guard.begin(Objects.requireNonNull(ctx.pipeline().context(guard)), msg);
                return;
            }
            ctx.fireChannelRead(msg);
        }
    }

    /**
     * The upgrade request came: what follows it is not HTTP, so the codec's decoder goes and hands what it still has
     * here as bytes (held); then the request goes on.
     */
    private void begin(ChannelHandlerContext ctx, Object request) {
        if (ctx.pipeline().get(NettyPipeline.HttpCodec) instanceof HttpServerCodec codec) {
            codec.removeInboundHandler();
        }
        ctx.fireChannelRead(request);
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (holding) {
            if (msg instanceof ByteBuf bytes) {
                hold(ctx, bytes);
                CompositeByteBuf held = early;
                if (held != null && held.readableBytes() > MAX_EARLY_BYTES) {
                    drop(); // a few messages come with a handshake, not megabytes
                    ctx.close();
                }
            } else if (msg instanceof HttpContent) {
                ctx.fireChannelRead(msg); // the upgrade request's own end, decoded before the decoder went
            } else {
                later.add(msg);
            }
            return;
        }
        ctx.fireChannelRead(msg); // fed in again from the head: on its way out of the guard
    }

    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
        if (holding && msg instanceof HttpResponse response) {
            ChannelPromise p = promise.unvoid();
            if (response.status().code() == HttpResponseStatus.SWITCHING_PROTOCOLS.code()) {
                p.addListener(f -> {
                    if (f.isSuccess()) {
                        upgraded = true;
                        // after the handshake's own listeners, which may have bound the WebSocket operations
                        ctx.executor().execute(() -> releaseOnceBound(ctx));
                    } else {
                        release(ctx, false);
                    }
                });
            } else {
                response.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
                p.addListener(ChannelFutureListener.CLOSE);
                p.addListener(f -> ctx.executor().execute(() -> release(ctx, false)));
            }
            ctx.write(msg, p);
            return;
        }
        ctx.write(msg, promise);
    }

    /**
     * Reactor Netty asks for a read once it has bound its WebSocket operations to the connection (from whatever thread
     * the handshake was called on): what was held goes in first.
     */
    @Override
    public void read(ChannelHandlerContext ctx) {
        if (holding && upgraded) {
            releaseOnceBound(ctx);
        }
        ctx.read();
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) {
        drop();
    }

    private void hold(ChannelHandlerContext ctx, ByteBuf bytes) {
        CompositeByteBuf held = early;
        if (held == null) {
            early = held = ctx.alloc().compositeBuffer();
        }
        held.addComponent(true, bytes);
    }

    /** Feeds what was held in once Reactor Netty's WebSocket operations take the frames; before, they would drop them. */
    private void releaseOnceBound(ChannelHandlerContext ctx) {
        if (holding && ChannelOperations.get(ctx.channel()) instanceof WebsocketInbound) {
            release(ctx, true);
        }
    }

    /** Feeds what was held in again (upgraded) or drops it (refused, or the connection failed), and leaves. */
    private void release(ChannelHandlerContext ctx, boolean upgraded) {
        if (!holding) {
            return;
        }
        holding = false;
        if (!upgraded || ctx.isRemoved() || !ctx.channel().isActive()) {
            drop();
        } else {
            CompositeByteBuf held = early;
            early = null;
            if (held != null && held.isReadable()) {
                ctx.pipeline().fireChannelRead(held); // from the head: the WebSocket decoder reads it first
            } else if (held != null) {
                held.release();
            }
            for (Object m; (m = later.poll()) != null; ) {
                ctx.fireChannelRead(m);
            }
            ctx.pipeline().fireChannelReadComplete();
        }
        if (!ctx.isRemoved()) {
            ctx.pipeline().remove(this);
        }
    }

    private void drop() {
        CompositeByteBuf held = early;
        early = null;
        if (held != null) {
            held.release();
        }
        for (Object m; (m = later.poll()) != null; ) {
            ReferenceCountUtil.release(m);
        }
    }

    private static boolean isWebSocketUpgrade(HttpRequest request) {
        return request.decoderResult().isSuccess()
                && HttpMethod.GET.equals(request.method())
                && HttpVersion.HTTP_1_1.equals(request.protocolVersion())
                && request.headers().containsValue(HttpHeaderNames.UPGRADE, HttpHeaderValues.WEBSOCKET, true);
    }
}
