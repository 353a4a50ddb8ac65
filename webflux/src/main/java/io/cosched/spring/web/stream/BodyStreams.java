package io.cosched.spring.web.stream;

import io.cosched.spring.web.MultipartStream;
import io.cosched.spring.web.netty.ServerChannels;
import io.netty.channel.Channel;
import java.io.InputStream;
import java.util.List;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.http.MediaType;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.web.server.ServerWebInputException;
import org.springframework.web.server.UnsupportedMediaTypeStatusException;

/**
 * The request body as an {@link InputStream} or a {@link MultipartStream}, for the handler arguments
 * ({@link StreamArguments}, {@link InputStreamBodyReader}). In a coroutine request they read from the connection
 * itself (not through the hand-off of delivered signals into the coroutine, which a handler that is running would
 * never drain) and are bound to the request's limits; elsewhere they are detached, and refuse to be made on the
 * connection's own event loop, which would wait for bytes only it can read.
 */
final class BodyStreams {

    private BodyStreams() {}

    static InputStream body(ServerHttpRequest request, ServerHttpResponse response, StreamLimits detachedLimits) {
        ServerHttpRequest raw = raw(request);
        StreamRequest owner = owner(request, response, detachedLimits, "an InputStream request body");
        return BodyInputStream.of(new PullSubscriber<DataBuffer>(
                raw.getBody(), owner, BodyInputStream.PREFETCH, DataBufferUtils::release, "reading the request body"));
    }

    static MultipartStream parts(
            ServerHttpRequest request,
            ServerHttpResponse response,
            MultipartLimits limits,
            int maxInMemorySize,
            StreamLimits detachedLimits) {
        MediaType type = request.getHeaders().getContentType();
        if (type == null || !"multipart".equals(type.getType())) {
            throw new UnsupportedMediaTypeStatusException(type, List.of(MediaType.MULTIPART_FORM_DATA));
        }
        String boundary = StreamedParts.boundary(type);
        if (boundary == null) {
            throw new ServerWebInputException("No multipart boundary found in Content-Type: \"" + type + "\"");
        }
        ServerHttpRequest raw = raw(request);
        StreamRequest owner = owner(request, response, detachedLimits, "a MultipartStream");
        BodyInputStream body = BodyInputStream.of(new PullSubscriber<DataBuffer>(
                raw.getBody(),
                owner,
                BodyInputStream.PREFETCH,
                DataBufferUtils::release,
                "reading the multipart request body"));
        return new StreamedParts(body, boundary, limits, maxInMemorySize);
    }

    /** The request whose body comes straight from the connection. */
    private static ServerHttpRequest raw(ServerHttpRequest request) {
        return request instanceof RequestStreams.BodySource ours ? ours.fromConnection() : request;
    }

    private static StreamRequest owner(
            ServerHttpRequest request, ServerHttpResponse response, StreamLimits detachedLimits, String what) {
        RequestStreams ours = RequestStreams.of(request);
        if (ours != null) {
            return ours;
        }
        if (onConnectionLoop(request)) {
            throw new IllegalStateException(what + " cannot be read on the connection's event loop thread ("
                    + Thread.currentThread().getName() + "): it would wait for bytes that only this thread can read. "
                    + "Run the handler as a coroutine (@RunAsCoroutine, or cosched.web.mode=all).");
        }
        return StreamRequest.detached(detachedLimits, response);
    }

    private static boolean onConnectionLoop(ServerHttpRequest request) {
        Channel channel = ServerChannels.of(request);
        return channel != null && channel.eventLoop().inEventLoop();
    }
}
