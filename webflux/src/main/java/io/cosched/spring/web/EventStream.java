package io.cosched.spring.web;

import java.io.IOException;

/**
 * A response of elements sent one at a time by blocking code: server-sent events ({@code text/event-stream}),
 * JSON lines ({@code application/x-ndjson}) or any streaming type Spring's codecs write for a {@code Flux<T>}.
 * Return it from a handler method (alone or as the body of a {@code ResponseEntity}); cosched calls
 * {@link #produce} in the request's coroutine once the handler has returned, with the request's context still set.
 *
 * <pre>{@code
 * @GetMapping(path = "/prices", produces = MediaType.TEXT_EVENT_STREAM_VALUE)
 * EventStream<ServerSentEvent<Price>> prices() {
 *     return events -> {
 *         for (long id = 1; ; id++) {
 *             Price p = prices.next();                      // may block
 *             events.send(ServerSentEvent.builder(p).id(Long.toString(id)).event("price").build());
 *         }
 *     };
 * }
 * }</pre>
 *
 * <p>Elements are encoded as Spring encodes the elements of a {@code Flux<T>}: a {@code ServerSentEvent} carries
 * an id, an event name, a retry time or a comment; any other element becomes an event's data (JSON, or text for a
 * {@code String}). Without {@code produces} on the mapping, the request's {@code Accept} header picks between
 * {@code text/event-stream} and {@code application/x-ndjson}.
 *
 * @param <T> the element type
 */
@FunctionalInterface
public interface EventStream<T> {

    /**
     * Sends the elements through {@code emitter}. Returning ends the response; throwing ends it too, with an error
     * response when nothing was sent yet, else by closing the connection.
     */
    void produce(Emitter<T> emitter) throws Exception;

    /**
     * Where an {@link EventStream} sends its elements: used by the coroutine that runs {@link #produce}, or by one
     * thread at a time that it hands the emitter to (Reactive Streams' rule: one element after another).
     */
    interface Emitter<T> {

        /**
         * Sends {@code element}: hands it to Spring's encoder at once when the client can take more, else parks
         * the calling coroutine until it can. The element is then on its way; Spring flushes each one.
         *
         * @throws StreamClosedException when the stream has ended: the client went away, it took nothing for
         *                               {@code cosched.web.stream.write-timeout}, or the stream ran past
         *                               {@code cosched.web.stream.max-duration}
         * @throws java.io.InterruptedIOException when the coroutine was interrupted while it waited
         */
        void send(T element) throws IOException;
    }
}
