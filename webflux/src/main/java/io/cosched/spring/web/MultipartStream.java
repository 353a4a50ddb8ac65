package io.cosched.spring.web;

import java.io.IOException;
import java.io.InputStream;
import org.jspecify.annotations.Nullable;
import org.springframework.http.HttpHeaders;

/**
 * The parts of a {@code multipart/form-data} request, read one after another as they arrive: declare it as a
 * parameter of a coroutine handler. Nothing is buffered in memory or on disk beyond what the reader has not taken
 * yet: a part's content is read from the connection as {@link Part#inputStream()} is read, so a 1 GB upload
 * passes through a handler with bounded memory.
 *
 * <pre>{@code
 * @RunAsCoroutine
 * @PostMapping(path = "/imports", consumes = MediaType.MULTIPART_FORM_DATA_VALUE)
 * ImportResult upload(MultipartStream parts) throws IOException {
 *     MultipartStream.Part part;
 *     while ((part = parts.next()) != null) {
 *         if ("file".equals(part.name())) {
 *             try (InputStream in = part.inputStream()) {
 *                 csv.load(in);                               // reads as the client sends
 *             }
 *         }
 *     }
 *     ...
 * }
 * }</pre>
 *
 * <p>Spring Boot's multipart limits apply as Spring applies them to streamed parts
 * ({@code spring.webflux.multipart.max-parts}, {@code max-headers-size}, {@code max-in-memory-size} for form
 * fields, {@code max-disk-usage-per-part} for a part's content, also of a part skipped): a part over a limit makes
 * the read throw, and a handler that lets it propagate answers 413 (too many parts or a malformed body: 400). Reads wait at most {@code cosched.web.stream.read-timeout} for the
 * client's next bytes.
 */
public interface MultipartStream {

    /**
     * The next part, once what is left of the previous one has been read and dropped; null after the last. Parks
     * the coroutine until the next part's headers have arrived.
     *
     * @throws IOException when the body is malformed, over a limit, or the client went away
     *                     ({@link StreamClosedException})
     */
    @Nullable
    Part next() throws IOException;

    /** One part: its headers at once, its content as it arrives. */
    interface Part {

        /** The name of the form field ({@code Content-Disposition}'s {@code name}); empty for a part without one. */
        String name();

        /** The file name the client gave, or null for a part that is not a file. */
        @Nullable
        String filename();

        /** The part's own headers. */
        HttpHeaders headers();

        /**
         * The part's content, read from the connection as it is read here; once per part. Closing it early drops
         * the rest of the part. It stays readable only until {@link MultipartStream#next()} is called again.
         */
        InputStream inputStream();

        /**
         * The value of a form field (a part with no file name and a {@code text/plain} or no content type), decoded
         * as its charset says (UTF-8 by default); Spring's {@code max-in-memory-size} bounds it.
         *
         * @throws IllegalStateException for a part that is not a form field: read it with {@link #inputStream()}
         */
        String value() throws IOException;
    }
}
