package io.cosched.spring.web.stream;

import java.io.IOException;
import java.io.InputStream;
import java.util.Objects;
import org.jspecify.annotations.Nullable;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferUtils;

/**
 * A request body (or one multipart part's content) as an {@link InputStream}: a read takes bytes from the buffers
 * the connection delivered and parks the reading coroutine until more arrive; the connection is asked for more
 * only as buffers are used up ({@link PullSubscriber}). Each buffer is released once read, or when the stream is
 * closed. Read by one thread at a time, as any {@code InputStream}.
 */
final class BodyInputStream extends InputStream {

    /**
     * Buffers asked for ahead of the reader, of up to 8 KiB each (the HTTP decoder's chunks): 512 KiB. Reactor Netty
     * stops reading the socket whenever they are used up and starts again at the next request, two epoll_ctl calls
     * and a wake-up each time; the loop reads several socket buffers before the reader runs, so with 8 ahead that
     * happened after almost every read (23 calls per MiB, 1.2x the CPU of a reactive handler), with 64 every eighth
     * (5 per MiB, 1.13x; benchmarks/stream.sh).
     */
    static final int PREFETCH = 64;

    /** Where the buffers come from. */
    interface Source {
        /** The next buffer, parking until it arrives; null at the end. */
        @Nullable
        DataBuffer next() throws IOException;

        /** The reader stops early: what is left is dropped. */
        void close();
    }

    private final Source source;
    private @Nullable DataBuffer current;
    private boolean ended;

    BodyInputStream(Source source) {
        this.source = source;
    }

    /**
     * A whole request body, as the connection delivers it. When the request ends, the buffer being read goes back
     * with the ones not read yet, also when the handler returned without reading to the end or closing the stream.
     */
    static BodyInputStream of(PullSubscriber<DataBuffer> body) {
        BodyInputStream in = new BodyInputStream(new Source() {
            @Override
            public @Nullable DataBuffer next() throws IOException {
                return body.next();
            }

            @Override
            public void close() {
                body.close();
            }
        });
        body.afterClose(in::dropCurrent);
        return in;
    }

    /**
     * Releases the buffer being read: the body's subscriber closed. Either the reader closed it (and holds no buffer
     * then) or the request ended, after its code returned: no read runs meanwhile.
     */
    private void dropCurrent() {
        DataBuffer b = current;
        current = null;
        if (b != null) {
            DataBufferUtils.release(b);
        }
    }

    @Override
    public int read() throws IOException {
        DataBuffer b = readable();
        return b == null ? -1 : b.read() & 0xFF;
    }

    @Override
    public int read(byte[] into, int off, int len) throws IOException {
        Objects.checkFromIndexSize(off, len, into.length);
        if (len == 0) {
            return 0;
        }
        DataBuffer b = readable();
        if (b == null) {
            return -1;
        }
        // what this buffer holds, without waiting for the next: a blocking read returns what is there
        int n = Math.min(len, b.readableByteCount());
        b.read(into, off, n);
        return n;
    }

    @Override
    public int available() {
        DataBuffer b = current;
        return b == null ? 0 : b.readableByteCount();
    }

    /** The buffer to read from, parking for the next when this one is used up; null at the end. */
    private @Nullable DataBuffer readable() throws IOException {
        DataBuffer b = current;
        while (b == null || b.readableByteCount() == 0) {
            if (b != null) {
                DataBufferUtils.release(b);
                current = null;
            }
            if (ended) {
                return null;
            }
            b = source.next();
            if (b == null) {
                ended = true;
                return null;
            }
            current = b;
        }
        return b;
    }

    /** Stops reading: what the connection still sends of this body (or part) is dropped. */
    @Override
    public void close() {
        DataBuffer b = current;
        current = null;
        if (b != null) {
            DataBufferUtils.release(b);
        }
        if (!ended) {
            ended = true;
            source.close();
        }
    }
}
