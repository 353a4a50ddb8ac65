package io.cosched.spring.web.stream;

import io.cosched.spring.web.StreamingResponseBody;
import java.io.IOException;
import java.io.OutputStream;
import java.util.Objects;
import org.jspecify.annotations.Nullable;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferFactory;
import org.springframework.core.io.buffer.DataBufferUtils;

/**
 * The {@link OutputStream} a {@link StreamingResponseBody} writes to: bytes fill a buffer of {@link #CHUNK} bytes
 * from the response's buffer factory (pooled by Netty), and a full buffer, or a flush, is sent as one element of
 * the {@link ResponseStream}, which parks the writer while the client takes nothing more. Used by the one
 * producing thread.
 */
final class ChunkedOutputStream extends OutputStream {

    /**
     * Bytes per element: what Tomcat's response buffer holds for Spring MVC's {@code StreamingResponseBody}. With
     * Reactor Netty asking for up to 128 elements ahead of the socket, a client that stops reading holds at most
     * 1 MiB of the response in the server beside the kernel's socket buffer.
     */
    static final int CHUNK = 8192;

    private final ResponseStream<DataBuffer> stream;
    private final DataBufferFactory buffers;
    private @Nullable DataBuffer chunk;
    private boolean closed;

    ChunkedOutputStream(ResponseStream<DataBuffer> stream, DataBufferFactory buffers) {
        this.stream = stream;
        this.buffers = buffers;
    }

    /** The producer of a {@link StreamingResponseBody}'s response. */
    static ResponseStream.Producer<DataBuffer> producer(StreamingResponseBody body, DataBufferFactory buffers) {
        return stream -> {
            ChunkedOutputStream out = new ChunkedOutputStream(stream, buffers);
            try {
                body.writeTo(out);
                out.flush();
            } finally {
                out.discard();
            }
        };
    }

    @Override
    public void write(int b) throws IOException {
        DataBuffer c = open();
        c.write((byte) b);
        if (c.readableByteCount() == CHUNK) {
            send();
        }
    }

    @Override
    public void write(byte[] bytes, int off, int len) throws IOException {
        Objects.checkFromIndexSize(off, len, bytes.length);
        while (len > 0) {
            DataBuffer c = open();
            int n = Math.min(len, CHUNK - c.readableByteCount());
            c.write(bytes, off, n);
            off += n;
            len -= n;
            if (c.readableByteCount() == CHUNK) {
                send();
            }
        }
    }

    /** Sends what was written since the last chunk went out, now. */
    @Override
    public void flush() throws IOException {
        if (chunk != null && chunk.readableByteCount() > 0) {
            send();
        }
    }

    @Override
    public void close() throws IOException {
        if (!closed) {
            flush();
            closed = true;
        }
    }

    private DataBuffer open() throws IOException {
        if (closed) {
            throw new IOException("the response body stream is closed");
        }
        DataBuffer c = chunk;
        if (c == null) {
            chunk = c = buffers.allocateBuffer(CHUNK);
        }
        return c;
    }

    private void send() throws IOException {
        DataBuffer c = Objects.requireNonNull(chunk);
        chunk = null;
        stream.send(c); // releases it when it cannot be sent
    }

    /** Releases a buffer that was written to but not sent (the writer failed). */
    void discard() {
        DataBuffer c = chunk;
        chunk = null;
        if (c != null) {
            DataBufferUtils.release(c);
        }
    }
}
