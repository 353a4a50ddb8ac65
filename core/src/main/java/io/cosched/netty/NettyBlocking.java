package io.cosched.netty;

import io.cosched.Parking;
import io.cosched.internal.Waits;
import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ConnectTimeoutException;
import io.netty.util.concurrent.Future;
import io.netty.util.concurrent.GenericFutureListener;
import java.io.IOException;
import java.net.ConnectException;
import java.net.SocketAddress;
import java.net.SocketTimeoutException;
import java.nio.channels.ClosedByInterruptException;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import org.jspecify.annotations.Nullable;

/** Blocking steps on Netty channels for code in coroutines (or any thread): connect, wait for a future. */
public final class NettyBlocking {

    private NettyBlocking() {}

    /**
     * Connects {@code bootstrap} (its loop, channel type, handler and options set, including
     * {@code CONNECT_TIMEOUT_MILLIS}) and parks until the connection is up.
     *
     * @param local the local address to bind, or {@code null} for any
     * @throws SocketTimeoutException "Connect timed out", as a JDK socket says it
     * @throws ConnectException when the peer refused or could not be reached
     * @throws ClosedByInterruptException when interrupted; the half-open channel is closed
     */
    public static Channel connect(Bootstrap bootstrap, SocketAddress remote, @Nullable SocketAddress local)
            throws IOException {
        ChannelFuture f = local == null ? bootstrap.connect(remote) : bootstrap.connect(remote, local);
        await(f);
        if (f.isSuccess()) {
            return f.channel();
        }
        f.channel().close();
        throw connectFailure(f.cause(), remote);
    }

    /**
     * The JDK's exception for a failed Netty connect, as {@link #connect} throws it:
     * {@code SocketTimeoutException("Connect timed out")}, {@code ConnectException}, or an
     * {@code IOException}; {@code cause} is its cause. For clients that connect without parking.
     */
    public static IOException connectFailure(Throwable cause, SocketAddress remote) {
        IOException e;
        if (cause instanceof ConnectTimeoutException) {
            e = new SocketTimeoutException("Connect timed out");
        } else if (cause instanceof ConnectException) {
            e = new ConnectException(cause.getMessage());
        } else if (cause instanceof IOException) {
            e = new IOException(cause.getMessage());
        } else {
            e = new IOException("connect to " + remote + " failed: " + cause);
        }
        e.initCause(cause); // the cause's stack is the loop's; ours shows the caller
        return e;
    }

    /**
     * Parks until {@code future} is done, successfully or not; the caller looks at the outcome.
     *
     * @throws ClosedByInterruptException when interrupted first; the future's channel is closed and
     *         the interrupt status stays set
     * @throws IOException when called on the channel's own event loop thread, which would never finish it
     */
    public static void await(ChannelFuture future) throws IOException {
        await(future, future.channel());
    }

    /**
     * Parks until {@code future}, an operation on {@code channel} (a TLS handshake, say), is done;
     * the caller looks at the outcome.
     *
     * @throws ClosedByInterruptException when interrupted first; {@code channel} is closed and the
     *         interrupt status stays set
     * @throws IOException when called on the channel's own event loop thread, which would never finish it
     */
    public static void await(Future<?> future, Channel channel) throws IOException {
        if (future.isDone()) {
            return;
        }
        if (channel.eventLoop().inEventLoop()) {
            throw new IOException("waiting for " + channel + " on its own event loop thread "
                    + Thread.currentThread().getName() + ", which would never finish it: call it from a coroutine "
                    + "or another thread");
        }
        FutureWait done = new FutureWait(future); // the one object a wait makes, as its listener did before
        future.addListener(done);
        if (Waits.park(done, null, null, false, future) == Parking.Outcome.INTERRUPTED) {
            channel.close();
            Thread.currentThread().interrupt();
            throw new ClosedByInterruptException();
        }
    }

    /** Wakes the waiting thread when the future is done, and is its wait's condition. */
    private static final class FutureWait implements GenericFutureListener<Future<Object>>, BooleanSupplier {
        private final Thread waiter = Thread.currentThread();
        private final Future<?> future;

        FutureWait(Future<?> future) {
            this.future = future;
        }

        @Override
        public void operationComplete(Future<Object> f) {
            LockSupport.unpark(waiter);
        }

        @Override
        public boolean getAsBoolean() {
            return future.isDone();
        }
    }
}
