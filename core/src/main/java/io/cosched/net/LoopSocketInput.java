package io.cosched.net;

import io.cosched.netty.NettyInbox;
import io.netty.buffer.ByteBuf;
import java.io.IOException;
import java.io.InputStream;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.nio.channels.ClosedByInterruptException;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.jspecify.annotations.Nullable;

/**
 * A {@link LoopSocket}'s input stream: takes the buffers its loop put in the socket's inbox, parking
 * the reader up to the socket timeout for the next one, and answers as a JDK socket's stream does
 * (-1 at the end, "Socket closed" after a close, "Closed by interrupt" when the reader was interrupted).
 */
final class LoopSocketInput extends InputStream {

    private final LoopSocket socket;
    private final NettyInbox inbox;
    // The part of a read buffer the reader has not copied out yet. Taken out while copying, so that a
    // close on another thread releases it only when no reader holds it.
    private final AtomicReference<ByteBuf> leftover = new AtomicReference<>();
    private volatile boolean eof;

    LoopSocketInput(LoopSocket socket, NettyInbox inbox) {
        this.socket = socket;
        this.inbox = inbox;
    }

    @Override
    public int read() throws IOException {
        byte[] one = new byte[1];
        int n = read(one, 0, 1);
        return n < 0 ? -1 : one[0] & 0xff;
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
        Objects.checkFromIndexSize(off, len, b.length);
        if (socket.isClosed()) {
            throw new SocketException("Socket closed");
        }
        if (len == 0) {
            return 0;
        }
        if (eof || socket.isInputShutdown()) {
            return -1;
        }
        ByteBuf buf = leftover.getAndSet(null);
        if (buf == null) {
            buf = next(socket.soTimeoutMillis());
            if (buf == null) {
                return -1;
            }
        }
        int n = 0;
        try {
            for (; ; ) {
                int chunk = Math.min(len - n, buf.readableBytes());
                buf.readBytes(b, off + n, chunk);
                n += chunk;
                if (n == len) {
                    break;
                }
                Object more = inbox.poll(); // more arrived already: hand it over without waiting
                if (more == null) {
                    break;
                }
                buf.release();
                buf = (ByteBuf) more;
            }
        } finally {
            keepOrRelease(buf);
        }
        return n;
    }

    /** The next buffer from the loop, waiting up to the socket timeout; {@code null} at the end. */
    private @Nullable ByteBuf next(int timeoutMillis) throws IOException {
        Object msg;
        try {
            msg = inbox.take(TimeUnit.MILLISECONDS.toNanos(timeoutMillis));
        } catch (ClosedByInterruptException e) {
            socket.close();
            throw LoopSocket.closedByInterrupt(e);
        } catch (SocketTimeoutException e) {
            throw e; // the socket stays usable
        } catch (IOException e) {
            // A JDK socket reports a broken connection as a SocketException ("Connection reset"),
            // and a TLS layer on top passes those through unchanged.
            SocketException s = new SocketException(socket.isClosed() ? "Socket closed" : e.getMessage());
            s.initCause(e);
            throw s;
        }
        if (msg == null) {
            if (socket.isClosed()) {
                throw new SocketException("Socket closed");
            }
            eof = true;
        }
        return (ByteBuf) msg;
    }

    @Override
    public int available() throws IOException {
        if (socket.isClosed()) {
            throw new SocketException("Socket closed");
        }
        if (eof || socket.isInputShutdown()) {
            return 0;
        }
        ByteBuf buf = leftover.get();
        long n = inbox.queuedBytes() + (buf == null ? 0 : buf.readableBytes());
        return (int) Math.min(Integer.MAX_VALUE, n);
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }

    /** After a read: keeps what is left of {@code buf} for the next one, unless the socket closed meanwhile. */
    private void keepOrRelease(ByteBuf buf) {
        if (!buf.isReadable()) {
            buf.release();
            return;
        }
        leftover.set(buf);
        // close() marks the socket closed before it calls releaseLeftover: either that released buf,
        // or we see the mark
        if (socket.isClosed() && leftover.compareAndSet(buf, null)) {
            buf.release();
        }
    }

    /** Called by the socket's close, after it is marked closed: frees what no reader holds. */
    void releaseLeftover() {
        ByteBuf buf = leftover.getAndSet(null);
        if (buf != null) {
            buf.release();
        }
    }
}
