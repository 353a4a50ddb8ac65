package io.cosched.bench.http;

import io.cosched.IOManager;
import io.netty.channel.EventLoop;
import io.netty.handler.codec.http.HttpHeaderNames;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.autoconfigure.condition.ConditionalOnExpression;
import org.springframework.context.SmartLifecycle;
import org.springframework.http.client.ReactorResourceFactory;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.netty.Connection;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;

/**
 * A throw-away prototype, never shipped (issue 25): what a coroutine route would cost if cosched served
 * it itself, without WebFlux. A second Reactor Netty server in the same JVM, on the same cosched loops,
 * answers {@code GET /hello} by starting a coroutine on the connection's loop that invokes the very
 * controller method the WebFlux route maps ({@link BlockingHandlers#hello()}, through a method handle),
 * and hands the result back to that loop to be written, as cosched's request path does; and
 * {@code GET /hello-bare} with no coroutine at all. Started only with {@code --bench.lean-port=N} in the
 * cosched variant; {@code benchmarks/lean-route.sh} measures both against the WebFlux route.
 *
 * <p>What it leaves out, and a lean path would have to reproduce: filters and Spring Security, argument
 * resolution and validation, exception handlers, content negotiation and message converters, the
 * observation, the request timeout, shedding and cancellation.
 */
@Component
@ConditionalOnExpression("'${bench.variant}'.equalsIgnoreCase('cosched') and '${bench.lean-port:0}' != '0'")
class LeanRoutePrototype implements SmartLifecycle {

    private final IOManager io;
    private final ReactorResourceFactory loops;
    private final BlockingHandlers handlers;
    private final int port;
    private volatile DisposableServer server;

    LeanRoutePrototype(
            IOManager io,
            ReactorResourceFactory loops,
            BlockingHandlers handlers,
            @Value("${bench.lean-port}") int port) {
        this.io = io;
        this.loops = loops;
        this.handlers = handlers;
        this.port = port;
    }

    @Override
    public void start() {
        MethodHandle hello;
        try {
            hello = MethodHandles.publicLookup()
                    .findVirtual(BlockingHandlers.class, "hello", MethodType.methodType(String.class))
                    .bindTo(handlers);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(e);
        }
        server = HttpServer.create()
                .runOn(loops.getLoopResources())
                .port(port)
                .route(routes -> routes.get("/hello", (request, response) -> {
                            EventLoop loop = ((Connection) request).channel().eventLoop();
                            Sinks.One<String> result = Sinks.one();
                            io.spawn(() -> {
                                String value;
                                try {
                                    value = (String) hello.invokeExact();
                                } catch (Throwable e) {
                                    loop.execute(() -> result.tryEmitError(e));
                                    return;
                                }
                                loop.execute(() -> result.tryEmitValue(value)); // written by the loop
                            });
                            return response.header(HttpHeaderNames.CONTENT_TYPE, "text/plain;charset=UTF-8")
                                    .sendString(result.asMono());
                        })
                        .get(
                                "/hello-bare",
                                (request, response) -> response.header(
                                                HttpHeaderNames.CONTENT_TYPE, "text/plain;charset=UTF-8")
                                        .sendString(Mono.just("hello"))))
                .bindNow();
    }

    @Override
    public void stop() {
        DisposableServer s = server;
        if (s != null) {
            s.disposeNow();
        }
    }

    @Override
    public boolean isRunning() {
        return server != null && !server.isDisposed();
    }
}
