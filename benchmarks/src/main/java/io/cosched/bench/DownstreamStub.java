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
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * The downstream service of the benchmarks' second scenario, in its own process so that it does not
 * share the server's JVM: every request is answered after a fixed delay, by a timer on a Netty event
 * loop, so the stub holds no thread while it waits and serves thousands of connections at once.
 *
 * <pre>DownstreamStub &lt;port&gt; &lt;delay-ms&gt; [threads] [jwks-file]</pre>
 * With a JSON Web Key set file (the heavy service benchmark), {@code GET /jwks} answers it at once, and so
 * does every POST (the service's OpenTelemetry span exports), with an empty 200.
 */
public final class DownstreamStub {

    private static final byte[] BODY = "{\"price\":4200}".getBytes(StandardCharsets.US_ASCII);

    private DownstreamStub() {}

    public static void main(String[] args) throws InterruptedException, IOException {
        if (args.length < 2) {
            System.err.println("usage: DownstreamStub <port> <delay-ms> [threads] [jwks-file]");
            System.exit(2);
        }
        int port = Integer.parseInt(args[0]);
        long delayMs = Long.parseLong(args[1]);
        int threads = args.length > 2 ? Integer.parseInt(args[2]) : 1;
        byte[] jwks = args.length > 3 ? Files.readAllBytes(Path.of(args[3])) : null;
        boolean epoll = Epoll.isAvailable();
        EventLoopGroup group = new MultiThreadIoEventLoopGroup(
                threads, epoll ? EpollIoHandler.newFactory() : NioIoHandler.newFactory());
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
                                            new HttpObjectAggregator(1 << 20),
                                            new Delayed(delayMs, jwks));
                        }
                    })
                    .bind(port)
                    .sync()
                    .channel();
            System.out.println("downstream stub on port " + port + ", " + delayMs + " ms per answer, "
                    + (epoll ? "epoll" : "nio") + ", " + threads + " thread(s)");
            server.closeFuture().sync();
        } finally {
            group.shutdownGracefully();
        }
    }

    private static final class Delayed extends SimpleChannelInboundHandler<FullHttpRequest> {
        private final long delayMs;
        private final byte[] jwks;

        Delayed(long delayMs, byte[] jwks) {
            this.delayMs = delayMs;
            this.jwks = jwks;
        }

        @Override
        protected void channelRead0(ChannelHandlerContext ctx, FullHttpRequest request) {
            boolean keepAlive = HttpUtil.isKeepAlive(request);
            if (jwks != null && request.method().equals(HttpMethod.POST)) {
                answer(ctx, new byte[0], keepAlive);
            } else if (jwks != null && request.uri().startsWith("/jwks")) {
                answer(ctx, jwks, keepAlive);
            } else {
                ctx.executor().schedule(() -> answer(ctx, BODY, keepAlive), delayMs, TimeUnit.MILLISECONDS);
            }
        }

        private static void answer(ChannelHandlerContext ctx, byte[] bytes, boolean keepAlive) {
            ByteBuf body = Unpooled.wrappedBuffer(bytes);
            FullHttpResponse response = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK, body);
            response.headers()
                    .set(HttpHeaderNames.CONTENT_TYPE, HttpHeaderValues.APPLICATION_JSON)
                    .setInt(HttpHeaderNames.CONTENT_LENGTH, body.readableBytes());
            if (keepAlive) {
                response.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.KEEP_ALIVE);
                ctx.writeAndFlush(response);
            } else {
                ctx.writeAndFlush(response).addListener(f -> ctx.close());
            }
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            ctx.close();
        }
    }
}
