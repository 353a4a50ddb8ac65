package io.cosched.spring.web.stream;

import io.cosched.spring.web.MultipartStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Objects;
import org.jspecify.annotations.Nullable;
import org.springframework.core.codec.DecodingException;
import org.springframework.core.io.buffer.DataBufferLimitException;
import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;

/**
 * A {@link MultipartStream} parsed in blocking style from the request body as the handler reads it
 * ({@code multipart/form-data}, RFC 7578): the body's buffers come through a {@link BodyInputStream}, which
 * releases each once it is copied into this reader's window, and a part's content is handed out up to the next
 * delimiter. Nothing else holds a buffer, so a part over a limit, a handler that stops early or a client that
 * leaves releases everything the way a plain {@code InputStream} body does (Spring's reactive parser, read a few
 * events at a time, left the slices of its buffers in Reactor's queues on those paths).
 *
 * <p>Spring's rules and limits, as its {@code PartEventHttpMessageReader} applies them: the first boundary may
 * follow a preamble, a part's headers are the bytes up to the first empty line (lines without a colon ignored),
 * a part with no file name and a {@code text/plain} or no content type is a form field (bounded by
 * {@code max-in-memory-size}, and by {@code max-disk-usage-per-part} when that is lower), any other part by
 * {@code max-disk-usage-per-part}, also when the handler skips it. A failure is a {@link BodyReadException}
 * whose cause is Spring's exception for it ({@link DataBufferLimitException}: 413, {@link DecodingException}:
 * 400); after one, the stream stays failed. Read by one thread at a time.
 */
final class StreamedParts implements MultipartStream {

    /** The window the body is read into: two of Reactor Netty's 8 KiB reads. */
    static final int WINDOW = 16 * 1024;

    /** Bytes after the closing delimiter read to let the request end cleanly; past them the body is dropped. */
    static final int MAX_EPILOGUE = 8 * 1024;

    private static final byte[] HEADERS_END = {'\r', '\n', '\r', '\n'};
    private static final int[] HEADERS_END_SKIPS = skips(HEADERS_END);

    private enum At {
        PREAMBLE,
        /** Just after a boundary: the closing "--" or a part's headers follow. */
        BOUNDARY,
        CONTENT,
        END
    }

    private final BodyInputStream body;
    private final MultipartLimits limits;
    private final long formLimit; // -1: none
    private final String formLimitProperty;
    private final String boundaryText;
    private final byte[] dashBoundary; // "--" boundary: the first one, which a preamble may precede
    private final byte[] delimiter; // CRLF "--" boundary: the ones after a part
    private final int[] dashBoundarySkips;
    private final int[] delimiterSkips;
    private final byte[] window;
    private int pos;
    private int end;
    private boolean bodyEnded;
    private At at = At.PREAMBLE;
    private int parts;
    private @Nullable StreamedPart current;
    private @Nullable BodyReadException failure;

    // the current part's content: [pos, contentEnd) is known to be content; delimiterAt: contentEnd is the delimiter
    private int contentEnd;
    private boolean delimiterAt;

    /**
     * @param body            the request body, from its first byte
     * @param boundary        the boundary of the body's {@code Content-Type}, without quotes
     * @param limits          Spring Boot's multipart limits
     * @param maxInMemorySize the form field limit of the server's multipart reader, -1 for none
     */
    StreamedParts(BodyInputStream body, String boundary, MultipartLimits limits, int maxInMemorySize) {
        this.body = body;
        this.limits = limits;
        this.boundaryText = boundary;
        byte[] b = boundary.getBytes(limits.headersCharset());
        this.dashBoundary = concat(new byte[] {'-', '-'}, b);
        this.delimiter = concat(new byte[] {'\r', '\n', '-', '-'}, b);
        this.dashBoundarySkips = skips(dashBoundary);
        this.delimiterSkips = skips(delimiter);
        this.window = new byte[Math.max(WINDOW, 4 * delimiter.length)];
        long partSize = limits.maxPartSize();
        boolean partLower = partSize != -1 && (maxInMemorySize == -1 || partSize < maxInMemorySize);
        this.formLimit = partLower ? partSize : maxInMemorySize;
        this.formLimitProperty = partLower ? "max-disk-usage-per-part" : "max-in-memory-size";
    }

    /**
     * The boundary a {@code Content-Type} names, unquoted; null when it names none.
     */
    static @Nullable String boundary(@Nullable MediaType type) {
        String b = type == null ? null : type.getParameter("boundary");
        if (b == null) {
            return null;
        }
        if (b.length() >= 2 && b.startsWith("\"") && b.endsWith("\"")) {
            b = b.substring(1, b.length() - 1);
        }
        return b.isEmpty() ? null : b;
    }

    @Override
    public @Nullable Part next() throws IOException {
        failedAlready();
        StreamedPart previous = current;
        if (previous != null) {
            current = null;
            previous.closed = true;
            if (at == At.CONTENT) {
                skipContent(previous);
            }
        }
        if (at == At.PREAMBLE) {
            skipPreamble();
        }
        if (at == At.END) {
            return null;
        }
        if (closingDelimiter()) {
            at = At.END;
            readEpilogue();
            return null;
        }
        HttpHeaders headers = readHeaders();
        parts++;
        if (limits.maxParts() > 0 && parts > limits.maxParts()) {
            throw fail(new DecodingException("Too many parts (" + parts + "/" + limits.maxParts()
                    + " allowed; spring.webflux.multipart.max-parts)"));
        }
        StreamedPart part = new StreamedPart(headers);
        at = At.CONTENT;
        contentEnd = pos;
        delimiterAt = false;
        current = part;
        return part;
    }

    // ---- the body's structure

    private void skipPreamble() throws IOException {
        for (; ; ) {
            int i = indexOf(dashBoundary, dashBoundarySkips, pos, end);
            if (i >= 0) {
                pos = i + dashBoundary.length;
                at = At.BOUNDARY;
                return;
            }
            pos = Math.max(pos, end - (dashBoundary.length - 1)); // a boundary may begin in what is kept
            if (!fill()) {
                throw fail(new DecodingException("Could not find first boundary"));
            }
        }
    }

    /** After a boundary: whether "--" follows (the body's last boundary). */
    private boolean closingDelimiter() throws IOException {
        while (end - pos < 2) {
            if (!fill()) {
                throw fail(new DecodingException("Could not find end of headers"));
            }
        }
        return window[pos] == '-' && window[pos + 1] == '-';
    }

    /** What a client sends after the last boundary (a line break, usually): read, so that the request ends. */
    private void readEpilogue() throws IOException {
        long read = end - pos;
        pos = end;
        while (read <= MAX_EPILOGUE && fill()) {
            read += end - pos;
            pos = end;
        }
        if (read > MAX_EPILOGUE) {
            body.close(); // the rest is dropped as it arrives
        }
    }

    /** A part's headers: the bytes after its boundary up to and with the first empty line. */
    private HttpHeaders readHeaders() throws IOException {
        ByteArrayOutputStream before = null; // header bytes that have left the window
        long size = 0;
        for (; ; ) {
            int i = indexOf(HEADERS_END, HEADERS_END_SKIPS, pos, end);
            int n = i >= 0 ? i + HEADERS_END.length - pos : Math.max(0, end - pos - (HEADERS_END.length - 1));
            size += n;
            if (size > limits.maxHeadersSize()) {
                throw fail(new DataBufferLimitException("Part headers exceeded the memory usage limit of "
                        + limits.maxHeadersSize() + " bytes (spring.webflux.multipart.max-headers-size)"));
            }
            if (i >= 0) {
                String text;
                if (before == null) {
                    text = new String(window, pos, n, limits.headersCharset());
                } else {
                    before.write(window, pos, n);
                    text = before.toString(limits.headersCharset());
                }
                pos += n;
                return parseHeaders(text);
            }
            if (n > 0) {
                if (before == null) {
                    before = new ByteArrayOutputStream();
                }
                before.write(window, pos, n);
                pos += n;
            }
            if (!fill()) {
                throw fail(new DecodingException("Could not find end of headers"));
            }
        }
    }

    private static HttpHeaders parseHeaders(String text) {
        HttpHeaders headers = new HttpHeaders();
        for (String line : text.split("\r\n")) {
            int colon = line.indexOf(':');
            if (colon != -1) {
                headers.add(line.substring(0, colon), line.substring(colon + 1).stripLeading());
            }
        }
        return headers;
    }

    // ---- a part's content

    /**
     * Up to {@code len} bytes of the current part's content, copied into {@code into} (or only passed over when it is
     * null); -1 at the part's end. Its limit applies either way.
     */
    private int readContent(StreamedPart part, byte @Nullable [] into, int off, int len) throws IOException {
        for (; ; ) {
            if (pos < contentEnd) {
                int n = Math.min(len, contentEnd - pos);
                part.count(n);
                if (into != null) {
                    System.arraycopy(window, pos, into, off, n);
                }
                pos += n;
                return n;
            }
            if (delimiterAt) {
                pos += delimiter.length;
                at = At.BOUNDARY;
                return -1;
            }
            findContent();
        }
    }

    /** Drops what is left of the current part's content; its limit still applies. */
    private void skipContent(StreamedPart part) throws IOException {
        while (readContent(part, null, 0, Integer.MAX_VALUE) >= 0) {
            // passed over, a window at a time
        }
    }

    /**
     * With the window's content used up ({@code pos == contentEnd}), finds more: up to the delimiter when the window
     * holds it, else all but a tail that may begin the delimiter; reads the body when that leaves nothing.
     */
    private void findContent() throws IOException {
        for (; ; ) {
            int i = indexOf(delimiter, delimiterSkips, pos, end);
            if (i >= 0) {
                contentEnd = i;
                delimiterAt = true;
                return;
            }
            int safe = end - delimiterPrefixAtEnd();
            if (safe > pos) {
                contentEnd = safe;
                return;
            }
            if (!fill()) {
                throw fail(new DecodingException("Could not find end of body (␍␊--" + boundaryText + ")"));
            }
            contentEnd = pos;
        }
    }

    /** The length of the longest tail of the window's unread bytes that is a beginning of the delimiter. */
    private int delimiterPrefixAtEnd() {
        for (int k = Math.min(delimiter.length - 1, end - pos); k > 0; k--) {
            if (Arrays.equals(window, end - k, end, delimiter, 0, k)) {
                return k;
            }
        }
        return 0;
    }

    // ---- the window

    /** Moves the unread bytes to the window's start and reads more of the body; false at its end. */
    private boolean fill() throws IOException {
        if (bodyEnded) {
            return false;
        }
        if (pos > 0) {
            System.arraycopy(window, pos, window, 0, end - pos);
            end -= pos;
            pos = 0;
        }
        int n = body.read(window, end, window.length - end); // the body's failures (the client left) as they are
        if (n < 0) {
            bodyEnded = true;
            return false;
        }
        end += n;
        return true;
    }

    /**
     * Where {@code what} begins in the window between {@code from} and {@code to}; -1 when it is not there whole.
     * Horspool's search: the window's byte under the pattern's last position says how far the pattern may move, its
     * length for a byte the pattern does not hold, so a part's content is looked at about once per pattern length
     * (a delimiter is 40 bytes or more with a browser's boundary) rather than byte by byte.
     */
    private int indexOf(byte[] what, int[] skips, int from, int to) {
        int last = what.length - 1;
        for (int i = from; i <= to - what.length; ) {
            int j = last;
            while (j >= 0 && window[i + j] == what[j]) {
                j--;
            }
            if (j < 0) {
                return i;
            }
            i += skips[window[i + last] & 0xFF];
        }
        return -1;
    }

    /** Horspool's shifts for {@code pattern}: by the byte under its last position. */
    private static int[] skips(byte[] pattern) {
        int[] skips = new int[256];
        Arrays.fill(skips, pattern.length);
        for (int i = 0; i < pattern.length - 1; i++) {
            skips[pattern[i] & 0xFF] = pattern.length - 1 - i;
        }
        return skips;
    }

    private BodyReadException fail(Exception cause) {
        at = At.END;
        body.close(); // released now, not when the request ends
        BodyReadException f = new BodyReadException("reading the multipart request body failed: " + cause, cause);
        failure = f;
        return f;
    }

    private void failedAlready() throws IOException {
        BodyReadException f = failure;
        if (f != null) {
            throw new BodyReadException(Objects.requireNonNull(f.getMessage()), Objects.requireNonNull(f.getCause()));
        }
    }

    private static byte[] concat(byte[] a, byte[] b) {
        byte[] r = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, r, a.length, b.length);
        return r;
    }

    private final class StreamedPart implements Part {
        private final HttpHeaders headers;
        private final boolean formField;
        private final long limit;
        private long size;
        private boolean taken;
        boolean closed; // the stream has moved on

        StreamedPart(HttpHeaders headers) {
            this.headers = headers;
            MediaType type = headers.getContentType();
            this.formField = headers.getContentDisposition().getFilename() == null
                    && (type == null || MediaType.TEXT_PLAIN.equalsTypeAndSubtype(type));
            this.limit = formField ? formLimit : limits.maxPartSize();
        }

        void count(long n) throws IOException {
            size += n;
            if (limit != -1 && size > limit) {
                throw fail(new DataBufferLimitException(
                        formField
                                ? "Form field '" + name() + "' exceeded the limit of " + limit
                                        + " bytes (spring.webflux.multipart." + formLimitProperty + ")"
                                : "Part '" + name() + "' exceeded the limit of " + limit
                                        + " bytes (spring.webflux.multipart.max-disk-usage-per-part)"));
            }
        }

        @Override
        public String name() {
            String name = headers.getContentDisposition().getName();
            return name != null ? name : "";
        }

        @Override
        public @Nullable String filename() {
            return headers.getContentDisposition().getFilename();
        }

        @Override
        public HttpHeaders headers() {
            return headers;
        }

        @Override
        public InputStream inputStream() {
            take("inputStream()");
            return new InputStream() {
                private boolean streamClosed;

                @Override
                public int read() throws IOException {
                    byte[] one = new byte[1];
                    int n = read(one, 0, 1);
                    return n < 0 ? -1 : one[0] & 0xFF;
                }

                @Override
                public int read(byte[] into, int off, int len) throws IOException {
                    Objects.checkFromIndexSize(off, len, into.length);
                    if (streamClosed || closed) {
                        throw new IOException("part '" + name() + "': "
                                + (streamClosed ? "its stream is closed" : "the stream has moved on to a later part"));
                    }
                    failedAlready();
                    if (len == 0 || at != At.CONTENT) {
                        return at == At.CONTENT ? 0 : -1;
                    }
                    return readContent(StreamedPart.this, into, off, len);
                }

                @Override
                public int available() {
                    return !streamClosed && !closed && at == At.CONTENT ? contentEnd - pos : 0;
                }

                /** Closing a part's stream drops what is left of the part (at the next part), not the parts after it. */
                @Override
                public void close() {
                    streamClosed = true;
                }
            };
        }

        @Override
        public String value() throws IOException {
            if (!formField) {
                throw new IllegalStateException("part '" + name() + "' is not a form field (it has "
                        + (filename() != null ? "a file name" : "content type " + headers.getContentType())
                        + "): read it with inputStream()");
            }
            take("value()");
            failedAlready();
            ByteArrayOutputStream value = new ByteArrayOutputStream();
            byte[] chunk = new byte[1024];
            int n;
            while (at == At.CONTENT && (n = readContent(this, chunk, 0, chunk.length)) >= 0) {
                value.write(chunk, 0, n);
            }
            MediaType type = headers.getContentType();
            Charset charset = type != null && type.getCharset() != null ? type.getCharset() : StandardCharsets.UTF_8;
            return value.toString(charset);
        }

        private void take(String how) {
            if (taken) {
                throw new IllegalStateException("part '" + name()
                        + "': its content was read already (expected: one inputStream() or value() per part)");
            }
            if (closed) {
                throw new IllegalStateException("part '" + name() + "': the stream has moved on to a later part");
            }
            taken = true;
        }
    }
}
