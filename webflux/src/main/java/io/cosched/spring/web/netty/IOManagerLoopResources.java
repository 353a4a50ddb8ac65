package io.cosched.spring.web.netty;

import io.cosched.IOManager;
import io.cosched.Internal;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelPromise;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.IoEventLoop;
import io.netty.channel.IoEventLoopGroup;
import io.netty.util.concurrent.AbstractEventExecutorGroup;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.Future;
import java.util.Iterator;
import java.util.concurrent.TimeUnit;
import reactor.netty.resources.LoopResources;

/**
 * Reactor Netty's loop resources backed by the IOManager: its event loops for connections, server
 * and client alike, and its acceptor loop for the server's listening socket, so that a loop stuck in
 * a handler cannot stop the server from accepting (new connections go to loops that are moving).
 * A client connection opens on the caller's loop: the home loop of a coroutine, the loop of a loop
 * thread (Reactor Netty's own resources do the latter; they cannot see a coroutine's loop, since a
 * coroutine's thread is not the loop's), the next loop for any other thread. Reactor Netty picks the
 * epoll channel types itself when the groups are epoll groups. Disposing it does nothing: the
 * IOManager's lifecycle owns the loops.
 */
@Internal
public final class IOManagerLoopResources implements LoopResources {

    private final IOManager io;
    private final EventLoopGroup clients;

    /** The event loops and acceptor of {@code io}. */
    public IOManagerLoopResources(IOManager io) {
        this.io = io;
        EventLoopGroup loops = io.eventLoopGroup(); // made with the IOManager, started or not
        this.clients = loops instanceof IoEventLoopGroup group ? new CallersLoop(io, group) : loops;
    }

    @Override
    public EventLoopGroup onServer(boolean useNative) {
        return io.eventLoopGroup();
    }

    @Override
    public EventLoopGroup onServerSelect(boolean useNative) {
        return io.acceptorGroup();
    }

    /** The loops, {@code next()} being the caller's loop where it has one. */
    @Override
    public EventLoopGroup onClient(boolean useNative) {
        return clients;
    }

    @Override
    public String toString() {
        return "IOManagerLoopResources[" + io.name() + "]";
    }

    /**
     * The IOManager's loops, whose {@link #next()} is the caller's loop ({@link IOManager#currentLoopIndex()}) where it
     * has one and the group's next one elsewhere. An {@link IoEventLoopGroup}, so that Reactor Netty recognises the
     * transport of its loops. Shutting it down does nothing: the IOManager owns the loops.
     */
    private static final class CallersLoop extends AbstractEventExecutorGroup implements IoEventLoopGroup {

        private final IOManager io;
        private final IoEventLoopGroup loops;

        CallersLoop(IOManager io, IoEventLoopGroup loops) {
            this.io = io;
            this.loops = loops;
        }

        @Override
        public IoEventLoop next() {
            int loopIndex = io.currentLoopIndex();
            return loopIndex < 0 ? loops.next() : (IoEventLoop) io.eventLoop(loopIndex);
        }

        @Override
        public Iterator<EventExecutor> iterator() {
            return loops.iterator();
        }

        @Override
        public ChannelFuture register(Channel channel) {
            return next().register(channel);
        }

        @Override
        public ChannelFuture register(ChannelPromise promise) {
            return next().register(promise);
        }

        @Override
        @Deprecated
        public ChannelFuture register(Channel channel, ChannelPromise promise) {
            return ((EventLoop) next()).register(channel, promise);
        }

        @Override
        public boolean isShuttingDown() {
            return loops.isShuttingDown();
        }

        @Override
        public Future<?> shutdownGracefully(long quietPeriod, long timeout, TimeUnit unit) {
            return loops.terminationFuture();
        }

        @Override
        public Future<?> terminationFuture() {
            return loops.terminationFuture();
        }

        @Override
        @Deprecated
        public void shutdown() {}

        @Override
        public boolean isShutdown() {
            return loops.isShutdown();
        }

        @Override
        public boolean isTerminated() {
            return loops.isTerminated();
        }

        @Override
        public boolean awaitTermination(long timeout, TimeUnit unit) throws InterruptedException {
            return loops.awaitTermination(timeout, unit);
        }
    }
}
