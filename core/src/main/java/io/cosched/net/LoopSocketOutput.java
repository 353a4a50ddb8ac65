package io.cosched.net;

import io.cosched.netty.NettyInbox;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import java.io.IOException;
import java.io.OutputStream;
import java.net.SocketException;
import java.nio.channels.ClosedByInterruptException;
import java.util.Objects;

/**
 * A {@link LoopSocket}'s output stream: every write goes to the channel at once (a driver need not
 * flush), after waiting while the channel is not writable, so a slow peer holds the writer back.
 */
final class LoopSocketOutput extends OutputStream {

    private final LoopSocket socket;
    private final NettyInbox inbox;

    LoopSocketOutput(LoopSocket socket, NettyInbox inbox) {
        this.socket = socket;
        this.inbox = inbox;
    }

    @Override
    public void write(int b) throws IOException {
        write(new byte[] {(byte) b}, 0, 1);
    }

    @Override
    public void write(byte[] b, int off, int len) throws IOException {
        Objects.checkFromIndexSize(off, len, b.length);
        if (socket.isClosed()) {
            throw new SocketException("Socket closed");
        }
        if (socket.isOutputShutdown()) {
            throw new SocketException("Socket output is shutdown");
        }
        if (len == 0) {
            return;
        }
        Channel ch = socket.checkConnected();
        try {
            inbox.awaitWritable();
        } catch (ClosedByInterruptException e) {
            socket.close();
            throw LoopSocket.closedByInterrupt(e);
        }
        if (!ch.isActive()) {
            throw new SocketException(socket.isClosed() ? "Socket closed" : "Connection closed by peer");
        }
        // A failure closes the channel, and the next read or write reports it.
        ByteBuf buf = ch.alloc().buffer(len).writeBytes(b, off, len);
        ch.writeAndFlush(buf, ch.voidPromise());
    }

    @Override
    public void flush() throws IOException {
        if (socket.isClosed()) {
            throw new SocketException("Socket closed");
        }
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
