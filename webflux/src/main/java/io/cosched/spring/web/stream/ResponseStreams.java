package io.cosched.spring.web.stream;

import io.cosched.spring.web.EventStream;
import io.cosched.spring.web.StreamingResponseBody;
import io.cosched.spring.web.netty.ServerChannels;
import io.netty.channel.Channel;
import io.netty.channel.ChannelOption;
import io.netty.channel.ChannelOutboundBuffer;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.reactive.HandlerResult;
import org.springframework.web.server.ServerWebExchange;

/**
 * Where a handler's streamed answer meets its request: the answer is told apart from others, and a coroutine
 * request's stream is made and bound to it while the handler's coroutine still runs, for the
 * {@link StreamResultHandler} to find when Spring writes the response.
 */
final class ResponseStreams {

    private ResponseStreams() {}

    /** The {@link StreamingResponseBody} or {@link EventStream} a handler answered with, alone or in a {@code ResponseEntity}. */
    static @Nullable Object streamBody(@Nullable Object returnValue) {
        Object body = returnValue instanceof ResponseEntity<?> entity ? entity.getBody() : returnValue;
        return body instanceof StreamingResponseBody || body instanceof EventStream<?> ? body : null;
    }

    /**
     * Binds a streamed answer to its coroutine request: the request produces it in its coroutine once the
     * outcome has gone to Spring. Called in the coroutine, with the handler's result.
     */
    static HandlerResult bind(HandlerResult result, ServerWebExchange exchange) {
        Object body = streamBody(result.getReturnValue());
        RequestStreams request = body == null ? null : RequestStreams.of(exchange);
        if (body != null && request != null) {
            request.respondWith(create(body, request, exchange));
            request.registerOn(exchange);
        }
        return result;
    }

    /** The stream bound to {@code exchange} for {@code body}, or null when its handler did not run as a coroutine request. */
    static @Nullable ResponseStream<?> bound(ServerWebExchange exchange, Object body) {
        RequestStreams request = RequestStreams.of(exchange);
        return request == null ? null : request.responseFor(body);
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    static ResponseStream<?> create(Object body, StreamRequest request, ServerWebExchange exchange) {
        Channel channel = ServerChannels.of(exchange.getRequest());
        Runnable abort = channel == null ? null : channel::close; // an HTTP/2 stream's channel: resets the stream
        LongSupplier progress = channel == null ? null : () -> pendingWrites(channel);
        // Spring's writers set the type before they subscribe: server-sent events, or bytes the handler typed so
        BooleanSupplier events = () -> MediaType.TEXT_EVENT_STREAM.isCompatibleWith(
                exchange.getResponse().getHeaders().getContentType());
        if (body instanceof StreamingResponseBody bytes) {
            return new ResponseStream<DataBuffer>(
                    body,
                    request,
                    ChunkedOutputStream.producer(bytes, exchange.getResponse().bufferFactory()),
                    DataBufferUtils::release,
                    abort,
                    progress,
                    events);
        }
        int sendBuffer = request.limits().eventSendBuffer();
        if (channel != null && sendBuffer > 0) {
            // a connection's own socket (an HTTP/2 stream's channel takes no socket option): set before the first
            // event is written, it bounds what a slow client lets the producer send ahead
            channel.config().setOption(ChannelOption.SO_SNDBUF, sendBuffer);
        }
        EventStream<Object> elements = (EventStream) body;
        return new ResponseStream<>(
                body, request, elements::produce, ResponseStreams::discard, abort, progress, events);
    }

    /** Starts the producer of a stream that belongs to no coroutine request on {@code producers}. */
    static void start(ResponseStream<?> stream, Executor producers) {
        try {
            producers.execute(stream::produce);
        } catch (RejectedExecutionException stopping) {
            stream.fail(stopping);
        }
    }

    /**
     * The bytes written to the channel but not yet taken by the socket: it shrinks as the client reads. Read from a
     * loop timer; a stale read of the counter only delays the judgement by one look.
     */
    private static long pendingWrites(Channel channel) {
        ChannelOutboundBuffer out = channel.unsafe().outboundBuffer();
        return out == null ? -1 : out.totalPendingWriteBytes();
    }

    private static void discard(Object element) {
        DataBufferUtils.release(element instanceof DataBuffer buffer ? buffer : null);
    }
}
