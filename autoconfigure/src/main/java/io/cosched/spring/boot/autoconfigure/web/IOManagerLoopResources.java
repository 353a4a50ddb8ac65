package io.cosched.spring.boot.autoconfigure.web;

import io.cosched.IOManager;
import io.netty.channel.EventLoopGroup;
import reactor.netty.resources.LoopResources;

/**
 * Reactor Netty's loop resources backed by the IOManager's event loops, for the server and for
 * Reactor Netty clients alike. Reactor Netty picks the epoll channel types itself when the group is
 * an epoll group. Disposing it does nothing: the IOManager's lifecycle owns the loops.
 */
final class IOManagerLoopResources implements LoopResources {

    private final IOManager io;

    IOManagerLoopResources(IOManager io) {
        this.io = io;
    }

    @Override
    public EventLoopGroup onServer(boolean useNative) {
        return io.eventLoopGroup();
    }

    @Override
    public String toString() {
        return "IOManagerLoopResources[" + io.name() + "]";
    }
}
