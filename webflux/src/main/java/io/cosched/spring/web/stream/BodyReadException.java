package io.cosched.spring.web.stream;

import java.io.IOException;

/**
 * Reading a streamed request body (or its multipart parts) failed: the cause is what failed it, such as Spring's
 * {@code DataBufferLimitException} for a part over a limit, or a {@code DecodingException} for a malformed body.
 * {@link StreamErrors} answers it as Spring answers the same failure of a {@code @RequestBody}: 413 or 400.
 */
final class BodyReadException extends IOException {

    private static final long serialVersionUID = 1L;

    BodyReadException(String message, Throwable cause) {
        super(message, cause);
    }
}
