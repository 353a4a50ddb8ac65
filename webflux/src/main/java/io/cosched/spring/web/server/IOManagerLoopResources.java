package io.cosched.spring.web.server;

import io.cosched.IOManager;
import io.netty.channel.EventLoopGroup;
import reactor.netty.resources.LoopResources;

/**
 * Reactor Netty's loop resources backed by the IOManager: its event loops for connections, server
 * and client alike, and its acceptor loop for the server's listening socket, so that a loop stuck in
 * a handler cannot stop the server from accepting (new connections go to loops that are moving).
 * Reactor Netty picks the epoll channel types itself when the groups are epoll groups. Disposing it
 * does nothing: the IOManager's lifecycle owns the loops.
 */
public final class IOManagerLoopResources implements LoopResources {

    private final IOManager io;

    /** The event loops and acceptor of {@code io}. */
    public IOManagerLoopResources(IOManager io) {
        this.io = io;
    }

    @Override
    public EventLoopGroup onServer(boolean useNative) {
        return io.eventLoopGroup();
    }

    @Override
    public EventLoopGroup onServerSelect(boolean useNative) {
        return io.acceptorGroup();
    }

    @Override
    public String toString() {
        return "IOManagerLoopResources[" + io.name() + "]";
    }
}
