package io.cosched.redis;

import io.cosched.IOManager;
import io.cosched.Transport;
import io.lettuce.core.event.DefaultEventPublisherOptions;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;
import io.lettuce.core.resource.EventLoopGroupProvider;
import io.lettuce.core.resource.NettyCustomizer;
import io.lettuce.core.resource.Transports;
import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.EventLoopGroup;
import io.netty.handler.flush.FlushConsolidationHandler;
import io.netty.util.concurrent.EventExecutorGroup;
import io.netty.util.concurrent.Future;
import io.netty.util.concurrent.ImmediateEventExecutor;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * Lettuce's event loops, taken from an {@link IOManager}: all of its loops, or one. A Lettuce
 * {@code RedisClient} whose {@link ClientResources} carry the provider of loop {@code i} opens every
 * connection on loop {@code i}, and reconnects there; a coroutine of that loop that waits for a reply
 * is then resumed by the thread that read it, without a hop through another thread. Route the callers
 * yourself with {@link IOManager#loopIndexForCaller()}, or let the Spring Data Redis connection factory of
 * this module ({@code LoopLettuceConnectionFactory}) do it.
 *
 * <p>cosched owns the loops: releasing or shutting down the provider leaves them running (stop the
 * IOManager instead). The IOManager and Lettuce must agree on the transport (see {@link #unsupportedReason}).
 */
public final class LoopEventLoopGroupProvider implements EventLoopGroupProvider {

    private final IOManager io;
    private final int loopIndex; // -1: all loops

    private LoopEventLoopGroupProvider(IOManager io, int loopIndex) {
        this.io = io;
        this.loopIndex = loopIndex;
    }

    /**
     * Every loop of {@code io}: Lettuce places each new connection on the next one, round-robin.
     *
     * @throws IllegalArgumentException if Lettuce's transport does not fit {@code io}'s ({@link #unsupportedReason})
     */
    public static LoopEventLoopGroupProvider allLoops(IOManager io) {
        check(io);
        return new LoopEventLoopGroupProvider(io, -1);
    }

    /**
     * Loop {@code index} of {@code io} alone: every connection of a client with these resources lives on it.
     *
     * @throws IllegalArgumentException if {@code index} is not a loop of {@code io}, or Lettuce's transport does
     *         not fit {@code io}'s ({@link #unsupportedReason})
     */
    public static LoopEventLoopGroupProvider loop(IOManager io, int index) {
        check(io);
        if (index < 0 || index >= io.threads()) {
            throw new IllegalArgumentException("index: " + index + " (expected: 0 to " + (io.threads() - 1)
                    + ", the loops of IOManager '" + io.name() + "')");
        }
        return new LoopEventLoopGroupProvider(io, index);
    }

    /**
     * Resources for a client on loop {@code index} of {@code io}, sharing everything else of {@code base}
     * (computation threads, timer, event bus, address resolvers, latency recorder, reconnect delay, Netty
     * customizer, tracing); its connections also flush once per turn of the loop (Netty's {@code FlushConsolidationHandler}). Its
     * command-latency events are off: {@code base} publishes the recorder they share.
     * Shut them down when their client is gone: that releases nothing shared, which stays {@code base}'s to
     * shut down. (Lettuce's own {@code mutate()} would not do here: the copy would shut down the executors of
     * {@code base} that {@code base} made itself.)
     */
    public static ClientResources resourcesOnLoop(ClientResources base, IOManager io, int index) {
        DefaultClientResources.Builder b = DefaultClientResources.builder()
                .eventLoopGroupProvider(loop(io, index))
                .eventExecutorGroup(base.eventExecutorGroup())
                .timer(base.timer())
                .eventBus(base.eventBus())
                .commandLatencyRecorder(base.commandLatencyRecorder())
                .commandLatencyPublisherOptions(DefaultEventPublisherOptions.disabled())
                .reconnectDelay(base::reconnectDelay)
                .addressResolverGroup(base.addressResolverGroup())
                .nettyCustomizer(new FlushTogether(base.nettyCustomizer()))
                .tracing(base.tracing());
        b.socketAddressResolver(base.socketAddressResolver());
        return b.build();
    }

    /**
     * The application's Netty customizer, then one flush per loop turn: the coroutines of a loop write their
     * commands from the loop's own carrier, one write task each, and without this every command would be a
     * {@code write(2)} of its own; Netty's {@link FlushConsolidationHandler} turns the flushes a turn of the loop
     * queued into one, after the tasks queued before it.
     */
    private record FlushTogether(NettyCustomizer theirs) implements NettyCustomizer {

        @Override
        public void afterBootstrapInitialized(Bootstrap bootstrap) {
            theirs.afterBootstrapInitialized(bootstrap);
        }

        @Override
        public void afterChannelInitialized(Channel channel) {
            theirs.afterChannelInitialized(channel);
            channel.pipeline()
                    .addFirst(
                            "cosched.flush",
                            new FlushConsolidationHandler(
                                    FlushConsolidationHandler.DEFAULT_EXPLICIT_FLUSH_AFTER_FLUSHES, true));
        }
    }

    /**
     * Why Lettuce's connections cannot live on {@code io}'s loops, or {@code null} when they can: Lettuce picks
     * its socket channel class itself (epoll when Netty's native epoll is there and {@code io.lettuce.core.epoll}
     * is not {@code false}, else NIO; kqueue and io_uring elsewhere), and a channel registers only on loops of
     * the same transport.
     */
    public static @Nullable String unsupportedReason(IOManager io) {
        String lettuce = Transports.socketChannelClass().getName();
        String ours = io.transport() == Transport.EPOLL
                ? "io.netty.channel.epoll.EpollSocketChannel"
                : "io.netty.channel.socket.nio.NioSocketChannel";
        if (lettuce.equals(ours)) {
            return null;
        }
        return "Lettuce uses " + lettuce + " but IOManager '" + io.name() + "' runs " + io.transport()
                + " loops (make them agree: cosched.io.transport, or the system property io.lettuce.core.epoll)";
    }

    private static void check(IOManager io) {
        Objects.requireNonNull(io, "io");
        String reason = unsupportedReason(io);
        if (reason != null) {
            throw new IllegalArgumentException("io: " + reason);
        }
    }

    /** The loop, or all of them; {@code type} is Lettuce's choice of group class, which these loops serve. */
    @Override
    @SuppressWarnings("unchecked")
    public <T extends EventLoopGroup> T allocate(Class<T> type) {
        // Lettuce only holds the result as an EventLoopGroup: one loop is a group of one
        return (T) (loopIndex < 0 ? io.eventLoopGroup() : io.eventLoop(loopIndex));
    }

    @Override
    public int threadPoolSize() {
        return loopIndex < 0 ? io.threads() : 1;
    }

    /** Nothing to release: the loops are the IOManager's. */
    @Override
    public Future<Boolean> release(EventExecutorGroup eventLoopGroup, long quietPeriod, long timeout, TimeUnit unit) {
        return ImmediateEventExecutor.INSTANCE.newSucceededFuture(true);
    }

    /** Nothing to shut down: the loops are the IOManager's. */
    @Override
    public Future<Boolean> shutdown(long quietPeriod, long timeout, TimeUnit timeUnit) {
        return ImmediateEventExecutor.INSTANCE.newSucceededFuture(true);
    }

    @Override
    public String toString() {
        return "LoopEventLoopGroupProvider[" + io.name()
                + (loopIndex < 0 ? ", all loops]" : ", loop " + loopIndex + "]");
    }
}
