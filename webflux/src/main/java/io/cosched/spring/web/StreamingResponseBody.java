package io.cosched.spring.web;

import java.io.OutputStream;

/**
 * A response body written as a stream of bytes by blocking code: return it from a handler method (alone or as
 * the body of a {@code ResponseEntity}) and cosched calls {@link #writeTo} in the request's coroutine once the
 * handler has returned, with the request's context (MDC, trace, security context) still set. Spring MVC's
 * {@code StreamingResponseBody} with cosched's import.
 *
 * <pre>{@code
 * @GetMapping(path = "/orders.csv", produces = "text/csv")
 * StreamingResponseBody export() {
 *     return out -> {
 *         for (Order o : orders.all()) {                  // may block: JDBC, a remote call
 *             out.write((o.id() + "," + o.total() + "\n").getBytes(UTF_8));
 *         }
 *     };
 * }
 * }</pre>
 *
 * <p>What is written goes out in chunks of 8 KiB ({@link OutputStream#flush()} sends a smaller one at once). A
 * write parks the coroutine while the client takes nothing more, so a slow client slows the writer instead of
 * filling memory; a client that leaves makes the next write throw {@link StreamClosedException} and interrupts
 * the coroutine. The status and headers go out with the first chunk: until then the handler's code may still
 * fail with an error status. docs/web.md "Streaming" has the limits that apply.
 */
@FunctionalInterface
public interface StreamingResponseBody {

    /**
     * Writes the body to {@code out}, which need not be closed. Returning ends the response; throwing ends it
     * too, with an error response when nothing was sent yet, else by closing the connection (so that a client
     * cannot mistake a cut-short body for a whole one).
     */
    void writeTo(OutputStream out) throws Exception;
}
