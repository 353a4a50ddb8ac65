package io.cosched.http.client;

import io.netty.buffer.ByteBuf;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.ReferenceCountUtil;
import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.net.SocketTimeoutException;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * The answer to {@link LoopHttpClient#exchange}: its status and headers have arrived, its body is
 * read from its connection's inbox as it arrives, parking the reader between pieces. Read the body
 * and close the response on the thread (or coroutine) that made the call. Once the last piece has been taken the connection goes back to its loop's connection pool
 * (or is closed, when either side said {@code Connection: close}); closing the response before
 * that closes the connection, unless the rest of the body has already arrived. A reader interrupted
 * while it waits for the body leaves the rest to the loop, which keeps the connection
 * ({@link ResponseDrain}).
 */
public final class LoopHttpResponse implements AutoCloseable {

    private final HttpConnectionPool pool;
    private final HttpConnection connection;
    private final HttpResponse head;
    private final boolean keepAlive;
    private final long readNanos;
    private final long drainNanos;
    private final Body body = new Body();
    private @Nullable HttpContent current; // the piece being read
    private boolean ended; // the last piece was taken: the connection is no longer ours
    private boolean closed;

    LoopHttpResponse(
            HttpConnectionPool pool,
            HttpConnection connection,
            HttpResponse head,
            boolean keepAlive,
            long readNanos,
            long drainNanos) {
        this.pool = pool;
        this.connection = connection;
        this.head = head;
        this.keepAlive = keepAlive;
        this.readNanos = readNanos;
        this.drainNanos = drainNanos;
    }

    /** The status code, such as 200. */
    public int status() {
        return head.status().code();
    }

    /** The reason phrase of the status line, such as {@code OK}. */
    public String reason() {
        return head.status().reasonPhrase();
    }

    /** The response's headers, as received. */
    public HttpHeaders headers() {
        return head.headers();
    }

    /** The body, read as it arrives; closing it closes the response. */
    public InputStream body() {
        return body;
    }

    /**
     * Ends the exchange: a connection whose whole response was read goes back to its loop's connection pool;
     * one with body still on its way is closed.
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        releaseCurrent();
        if (ended) {
            return;
        }
        // Unread body: keep the connection only if all of it is here already, else close it.
        Object msg;
        while ((msg = connection.inbox.poll()) != null) {
            boolean last = msg instanceof LastHttpContent;
            boolean failed = msg instanceof HttpContent c && c.decoderResult().isFailure();
            ReferenceCountUtil.release(msg);
            if (failed) {
                break;
            }
            if (last) {
                ended = true;
                finish();
                return;
            }
        }
        ended = true;
        connection.close();
    }

    /** After the last piece: the connection carries the next exchange, or closes. */
    private void finish() {
        if (keepAlive && connection.isReusable()) {
            pool.offer(connection);
        } else {
            connection.close();
        }
    }

    private void releaseCurrent() {
        HttpContent c = current;
        current = null;
        if (c != null) {
            c.release();
        }
    }

    /** The next piece with bytes in it, or {@code null} at the end of the body. */
    private @Nullable ByteBuf next() throws IOException {
        for (; ; ) {
            HttpContent c = current;
            if (c != null && c.content().isReadable()) {
                return c.content();
            }
            releaseCurrent();
            if (ended) {
                return null;
            }
            Object msg;
            try {
                msg = connection.inbox.take(readNanos);
            } catch (SocketTimeoutException e) {
                ended = true;
                connection.close();
                throw e;
            } catch (InterruptedIOException e) {
                ended = true; // the reader was interrupted: the loop reads the rest and keeps the connection
                ResponseDrain.start(connection, pool, keepAlive, drainNanos);
                throw e;
            } catch (IOException e) {
                ended = true;
                connection.close();
                throw e;
            }
            if (msg == null) {
                ended = true;
                connection.close();
                throw new IOException("Premature EOF: " + connection.key + " closed the connection before the end of "
                        + "the response body");
            }
            connection.checkDecoded(msg);
            if (!(msg instanceof HttpContent content)) {
                ReferenceCountUtil.release(msg);
                ended = true;
                connection.close();
                throw new IOException("unexpected " + msg.getClass().getSimpleName() + " in the response body from "
                        + connection.key);
            }
            current = content;
            if (content instanceof LastHttpContent) {
                ended = true;
                finish(); // the bytes in hand are ours; the connection may serve the next exchange already
            }
        }
    }

    private final class Body extends InputStream {

        @Override
        public int read() throws IOException {
            ByteBuf buf = open();
            return buf == null ? -1 : buf.readByte() & 0xff;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            Objects.checkFromIndexSize(off, len, b.length);
            if (len == 0) {
                return 0;
            }
            ByteBuf buf = open();
            if (buf == null) {
                return -1;
            }
            int n = Math.min(len, buf.readableBytes());
            buf.readBytes(b, off, n);
            return n;
        }

        @Override
        public int available() {
            HttpContent c = current;
            int here = c == null ? 0 : c.content().readableBytes();
            return closed || ended ? here : (int) Math.min(Integer.MAX_VALUE, here + connection.inbox.queuedBytes());
        }

        @Override
        public void close() {
            LoopHttpResponse.this.close();
        }

        private @Nullable ByteBuf open() throws IOException {
            if (closed) {
                throw new IOException("the response is closed");
            }
            return next();
        }
    }
}
