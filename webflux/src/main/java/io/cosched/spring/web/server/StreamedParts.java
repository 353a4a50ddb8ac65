package io.cosched.spring.web.server;

import io.cosched.spring.web.MultipartStream;
import java.io.IOException;
import java.io.InputStream;
import org.jspecify.annotations.Nullable;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.http.HttpHeaders;
import org.springframework.http.codec.multipart.FilePartEvent;
import org.springframework.http.codec.multipart.FormPartEvent;
import org.springframework.http.codec.multipart.PartEvent;

/**
 * A {@link MultipartStream} over Spring's streaming multipart parser ({@code PartEventHttpMessageReader}, with
 * Spring Boot's {@code spring.webflux.multipart.*} limits): its events are pulled one at a time, a part's content
 * events read through the part's {@code InputStream}, and a part's last event ends it.
 */
final class StreamedParts implements MultipartStream {

    /** Events asked for ahead of the reader; each holds at most one body buffer. */
    static final int PREFETCH = 4;

    private final PullSubscriber<PartEvent> events;
    private @Nullable StreamedPart current;

    StreamedParts(PullSubscriber<PartEvent> events) {
        this.events = events;
    }

    static void release(PartEvent event) {
        DataBufferUtils.release(event.content());
    }

    @Override
    public @Nullable Part next() throws IOException {
        StreamedPart previous = current;
        if (previous != null) {
            previous.skipRest();
        }
        PartEvent first = events.next();
        current = first == null ? null : new StreamedPart(first);
        return current;
    }

    private final class StreamedPart implements Part, BodyInputStream.Source {
        private final PartEvent first;
        private boolean firstTaken;
        private boolean ended;
        private @Nullable BodyInputStream content;

        StreamedPart(PartEvent first) {
            this.first = first;
        }

        @Override
        public String name() {
            return first.name();
        }

        @Override
        public @Nullable String filename() {
            return first instanceof FilePartEvent file
                    ? file.filename()
                    : first.headers().getContentDisposition().getFilename();
        }

        @Override
        public HttpHeaders headers() {
            return first.headers();
        }

        @Override
        public InputStream inputStream() {
            if (content != null || (firstTaken && first instanceof FormPartEvent)) {
                throw new IllegalStateException("part '" + name()
                        + "': its content was read already (expected: one inputStream() or value() per part)");
            }
            if (current != this) {
                throw new IllegalStateException("part '" + name() + "': the stream has moved on to a later part");
            }
            content = new BodyInputStream(this);
            return content;
        }

        @Override
        public String value() {
            if (!(first instanceof FormPartEvent form)) {
                throw new IllegalStateException("part '" + name() + "' is not a form field (it has "
                        + (filename() != null
                                ? "a file name"
                                : "content type " + headers().getContentType())
                        + "): read it with inputStream()");
            }
            if (!firstTaken) {
                firstTaken = true;
                release(first);
                ended = first.isLast();
            }
            return form.value();
        }

        // ---- BodyInputStream.Source: this part's content events, up to its last

        @Override
        public @Nullable DataBuffer next() throws IOException {
            if (!firstTaken) {
                firstTaken = true;
                ended = first.isLast();
                return first.content();
            }
            if (ended) {
                return null;
            }
            PartEvent e = events.next();
            if (e == null) {
                ended = true;
                throw new IOException("reading part '" + name() + "': the request body ended inside the part");
            }
            ended = e.isLast();
            return e.content();
        }

        /** Closing a part's stream drops what is left of the part, not the parts after it. */
        @Override
        public void close() {}

        /** Reads and drops what is left of this part, so that the next event is the next part's first. */
        void skipRest() throws IOException {
            BodyInputStream in = content;
            if (in != null) {
                in.close();
            }
            DataBuffer b;
            while ((b = next()) != null) {
                DataBufferUtils.release(b);
            }
        }
    }
}
