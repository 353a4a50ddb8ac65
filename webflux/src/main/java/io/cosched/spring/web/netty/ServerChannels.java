package io.cosched.spring.web.netty;

import io.cosched.Internal;
import io.netty.channel.Channel;
import org.jspecify.annotations.Nullable;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.http.server.reactive.ServerHttpRequestDecorator;
import org.springframework.util.ClassUtils;

/**
 * The Netty channel a request came on, where Reactor Netty serves it: what finds a request's event loop (its
 * coroutine's carrier, a body that must not be read there) and a streamed answer's socket. The one place that asks.
 */
@Internal
public final class ServerChannels {

    private static final boolean REACTOR_NETTY =
            ClassUtils.isPresent("reactor.netty.Connection", ServerChannels.class.getClassLoader());

    private ServerChannels() {}

    /**
     * The request's channel (an HTTP/2 stream's own channel for a stream); null when Reactor Netty does not serve it,
     * or no server does (a {@code WebTestClient} bound to a router, a mock exchange).
     */
    public static @Nullable Channel of(ServerHttpRequest request) {
        if (!REACTOR_NETTY) {
            return null;
        }
        try {
            return ServerHttpRequestDecorator.getNativeRequest(request) instanceof reactor.netty.Connection c
                    ? c.channel()
                    : null;
        } catch (IllegalArgumentException | IllegalStateException noServer) {
            return null;
        }
    }
}
