package io.cosched.spring.web.stream;

import io.cosched.Internal;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.util.Objects;

/**
 * The limits of a {@link io.cosched.spring.web.MultipartStream}, Spring Boot's {@code spring.webflux.multipart.*}
 * (a form field's limit, {@code max-in-memory-size}, is read from the server's own multipart reader, where
 * {@code spring.codec.max-in-memory-size} may also have set it). Public for the starter's wiring, not an API.
 *
 * @param maxParts       parts a body may have; 0 or less for no limit ({@code max-parts})
 * @param maxHeadersSize bytes of one part's headers, > 0 ({@code max-headers-size})
 * @param maxPartSize    bytes of one part's content, or -1 for no limit ({@code max-disk-usage-per-part})
 * @param headersCharset how part headers (and the boundary) are decoded ({@code headers-charset})
 */
@Internal
public record MultipartLimits(int maxParts, int maxHeadersSize, long maxPartSize, Charset headersCharset) {

    public MultipartLimits {
        if (maxHeadersSize <= 0) {
            throw new IllegalArgumentException(
                    "spring.webflux.multipart.max-headers-size: " + maxHeadersSize + " bytes (expected: > 0)");
        }
        if (maxPartSize < -1) {
            throw new IllegalArgumentException("spring.webflux.multipart.max-disk-usage-per-part: " + maxPartSize
                    + " bytes (expected: >= 0, or -1 for no limit)");
        }
        Objects.requireNonNull(headersCharset, "headersCharset");
    }

    /** Spring's defaults: any number of parts, 10 KiB of headers, parts of any size, UTF-8. */
    public static MultipartLimits springDefaults() {
        return new MultipartLimits(-1, 10 * 1024, -1, StandardCharsets.UTF_8);
    }
}
