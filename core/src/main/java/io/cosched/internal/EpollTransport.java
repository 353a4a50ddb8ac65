package io.cosched.internal;

import io.cosched.Transport;
import io.netty.channel.ChannelFactory;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.IoOps;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollIoOps;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.socket.SocketChannel;

/** Linux epoll through Netty's native transport. */
final class EpollTransport implements IOTransport {

    static boolean isAvailable() {
        try {
            return Epoll.isAvailable();
        } catch (LinkageError e) {
            return false; // netty-transport-classes-epoll missing
        }
    }

    static Throwable unavailabilityCause() {
        try {
            return Epoll.unavailabilityCause();
        } catch (LinkageError e) {
            return e;
        }
    }

    @Override
    public Transport kind() {
        return Transport.EPOLL;
    }

    @Override
    public IoHandlerFactory handlerFactory() {
        return EpollIoHandler.newFactory();
    }

    /** Each change of a channel's interest is an epoll_ctl call. */
    @Override
    public IoOps deferredChanges() {
        return EpollIoOps.NONE;
    }

    @Override
    public ChannelFactory<? extends SocketChannel> socketChannelFactory() {
        return EpollSocketChannel::new;
    }
}
