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
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;

/**
 * The downstream service of the benchmarks' second scenario, in its own process so that it does not
 * share the server's JVM: every request is answered after a fixed delay, by a timer on a Netty event
 * loop, so the stub holds no thread while it waits and serves thousands of connections at once.
 *
 * <pre>DownstreamStub &lt;port&gt; &lt;delay-ms&gt; [threads]</pre>
 */
public final class DownstreamStub {

    private static final byte[] BODY = "{\"price\":4200}".getBytes(StandardCharsets.US_ASCII);

    private DownstreamStub() {
    }

    public static void main(String[] args) throws InterruptedException {
        if (args.length < 2) {
            System.err.println("usage: DownstreamStub <port> <delay-ms> [threads]");
            System.exit(2);
        }
        int port = Integer.parseInt(args[0]);
        long delayMs = Long.parseLong(args[1]);
        int threads = args.length > 2 ? Integer.parseInt(args[2]) : 1;
        boolean epoll = Epoll.isAvailable();
        EventLoopGroup group = new MultiThreadIoEventLoopGroup(threads,
                epoll ? EpollIoHandler.newFactory() : NioIoHandler.newFactory());
        try {
            Channel server = new ServerBootstrap()
                    .group(group)
                    .channel(epoll ? EpollServerSocketChannel.class : NioServerSocketChannel.class)
                    .option(ChannelOption.SO_BACKLOG, 8192)
                    .childHandler(new ChannelInitializer<SocketChannel>() {
                        @Override
                        protected void initChannel(SocketChannel ch) {
                            ch.pipeline().addLast(new HttpServerCodec(), new HttpObjectAggregator(8192), new Delayed(delayMs));
                        }
                    })
                    .bind(port).sync().channel();
            System.out.println("downstream stub on port " + port + ", " + delayMs + " ms per answer, "
                    + (epoll ? "epoll" : "nio") + ", " + threads + " thread(s)");
            server.closeFuture().sync();
        } finally {
            group.shutdownGracefully();
        }
    }

    private static final class Delayed extends SimpleChannelInboundHandler<FullHttpRequest> {
        private final long delayMs;

        Delayed(long delayMs) {
            this.delayMs = delayMs;
        }

        @Override
        protected void channelRead0(ChannelHandlerContext ctx, FullHttpRequest request) {
            boolean keepAlive = HttpUtil.isKeepAlive(request);
            ctx.executor().schedule(() -> {
                ByteBuf body = Unpooled.wrappedBuffer(BODY);
                FullHttpResponse response = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK, body);
                response.headers().set(HttpHeaderNames.CONTENT_TYPE, HttpHeaderValues.APPLICATION_JSON)
                        .setInt(HttpHeaderNames.CONTENT_LENGTH, body.readableBytes());
                if (keepAlive) {
                    response.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.KEEP_ALIVE);
                    ctx.writeAndFlush(response);
                } else {
                    ctx.writeAndFlush(response).addListener(f -> ctx.close());
                }
            }, delayMs, TimeUnit.MILLISECONDS);
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            ctx.close();
        }
    }
}
