package io.cosched.internal;

import io.cosched.Transport;
import io.netty.channel.ChannelFactory;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;

/** Java NIO selectors; available everywhere. */
final class NioTransport implements IOTransport {

    @Override
    public Transport kind() {
        return Transport.NIO;
    }

    @Override
    public IoHandlerFactory handlerFactory() {
        return NioIoHandler.newFactory();
    }

    @Override
    public ChannelFactory<? extends SocketChannel> socketChannelFactory() {
        return NioSocketChannel::new;
    }
}
