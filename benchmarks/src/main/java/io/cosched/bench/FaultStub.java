package io.cosched.bench;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpVersion;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;

/**
 * A pricing service that misbehaves on request, for the fault suite (benchmarks/soak.sh): it answers
 * {@code GET /downstream/price/{sku}} as the demo's own stub does, after a delay, until told
 * otherwise with {@code GET /mode/ok}, {@code /mode/stall} (read requests, never answer) or
 * {@code /mode/reset} (answer a request by resetting its connection).
 *
 * <pre>FaultStub &lt;port&gt; &lt;delay-ms&gt;</pre>
 */
public final class FaultStub {

    private static volatile String mode = "ok";

    private FaultStub() {}

    public static void main(String[] args) throws InterruptedException {
        int port = Integer.parseInt(args[0]);
        long delayMs = Long.parseLong(args[1]);
        boolean epoll = Epoll.isAvailable();
        EventLoopGroup group =
                new MultiThreadIoEventLoopGroup(1, epoll ? EpollIoHandler.newFactory() : NioIoHandler.newFactory());
        try {
            Channel server = new ServerBootstrap()
                    .group(group)
                    .channel(epoll ? EpollServerSocketChannel.class : NioServerSocketChannel.class)
                    .option(ChannelOption.SO_BACKLOG, 8192)
                    .childHandler(new ChannelInitializer<SocketChannel>() {
                        @Override
                        protected void initChannel(SocketChannel ch) {
                            ch.pipeline()
                                    .addLast(
                                            new HttpServerCodec(),
                                            new HttpObjectAggregator(8192),
                                            new Handler(delayMs));
                        }
                    })
                    .bind(port)
                    .sync()
                    .channel();
            System.out.println("fault stub on port " + port + ", " + delayMs + " ms per answer");
            server.closeFuture().sync();
        } finally {
            group.shutdownGracefully();
        }
    }

    private static final class Handler extends SimpleChannelInboundHandler<FullHttpRequest> {
        private final long delayMs;

        Handler(long delayMs) {
            this.delayMs = delayMs;
        }

        @Override
        protected void channelRead0(ChannelHandlerContext ctx, FullHttpRequest request) {
            String uri = request.uri();
            if (uri.startsWith("/mode/")) {
                mode = uri.substring("/mode/".length());
                answer(ctx, HttpResponseStatus.OK, "{\"mode\":\"" + mode + "\"}");
                return;
            }
            switch (mode) {
                case "stall" -> {} // read, never answered: the caller's timeout must end it
                case "reset" -> {
                    ctx.channel().config().setOption(ChannelOption.SO_LINGER, 0);
                    ctx.close();
                }
                default -> {
                    String sku = uri.substring(uri.lastIndexOf('/') + 1);
                    ctx.executor()
                            .schedule(
                                    () -> answer(
                                            ctx, HttpResponseStatus.OK, "{\"sku\":\"" + sku + "\",\"cents\":4200}"),
                                    delayMs,
                                    TimeUnit.MILLISECONDS);
                }
            }
        }

        private static void answer(ChannelHandlerContext ctx, HttpResponseStatus status, String json) {
            ByteBuf body = Unpooled.copiedBuffer(json, StandardCharsets.UTF_8);
            FullHttpResponse response = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, status, body);
            response.headers()
                    .set(HttpHeaderNames.CONTENT_TYPE, HttpHeaderValues.APPLICATION_JSON)
                    .setInt(HttpHeaderNames.CONTENT_LENGTH, body.readableBytes());
            ctx.writeAndFlush(response);
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            ctx.close();
        }
    }
}
