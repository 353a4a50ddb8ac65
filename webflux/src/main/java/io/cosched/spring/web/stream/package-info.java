/**
 * Streaming in blocking style: request bodies read as an {@code InputStream} or a {@code MultipartStream},
 * responses written as a {@code StreamingResponseBody} or an {@code EventStream}, and blocking WebSocket
 * conversations, with their limits and their errors. It never names the request path: a coroutine request is
 * one {@link io.cosched.spring.web.stream.RequestStreams.Owner}, found through
 * {@link io.cosched.spring.web.stream.RequestStreams}; {@link io.cosched.spring.web.stream.StreamingSupport}
 * is the door for the wiring.
 */
@NullMarked
package io.cosched.spring.web.stream;

import org.jspecify.annotations.NullMarked;
