package io.cosched.internal;

import io.cosched.Transport;
import io.cosched.TransportUnavailableException;
import io.netty.channel.ChannelFactory;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.IoOps;
import io.netty.channel.socket.SocketChannel;
import org.jspecify.annotations.Nullable;

/** One I/O transport for the event loops; {@link #select} decides once per IOManager. */
interface IOTransport {

    /** {@code EPOLL} or {@code NIO}, never {@code AUTO}. */
    Transport kind();

    IoHandlerFactory handlerFactory();

    /**
     * The transport's "no interest" operations, when changes of a channel's interest cost a system call each and so
     * wait for the loop's next poll ({@link DeferredOps}); null when they are applied at once.
     */
    default @Nullable IoOps deferredChanges() {
        return null;
    }

    /** Client TCP channels of this transport, for connections opened on the loops. */
    ChannelFactory<? extends SocketChannel> socketChannelFactory();

    static IOTransport select(Transport requested) {
        return switch (requested) {
            case NIO -> new NioTransport();
            case EPOLL -> {
                if (!EpollTransport.isAvailable()) {
                    Throwable cause = EpollTransport.unavailabilityCause();
                    throw new TransportUnavailableException(
                            Transport.EPOLL,
                            "transport: EPOLL requested, but Netty's "
                                    + "native epoll transport is unavailable ("
                                    + (cause == null ? "unknown cause" : cause)
                                    + "). Use Transport.AUTO or NIO, or add io.netty:netty-transport-native-epoll with the "
                                    + "classifier of this platform (e.g. linux-x86_64) on Linux.",
                            cause);
                }
                yield new EpollTransport();
            }
            case AUTO -> EpollTransport.isAvailable() ? new EpollTransport() : new NioTransport();
        };
    }
}
