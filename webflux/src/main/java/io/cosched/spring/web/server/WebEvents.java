package io.cosched.spring.web.server;

import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;
import jdk.jfr.Timespan;
import org.jspecify.annotations.Nullable;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.web.reactive.HandlerMapping;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.util.pattern.PathPattern;

/**
 * The JDK Flight Recorder events of coroutine requests, category "cosched", "Web": shed, timed out,
 * cancelled. None is recorded for a request that is simply served; each costs a check of a constant
 * and of the event's enabled flag when no recording wants it. The path is the handler's path pattern
 * when Spring has matched one, else the request's path without its query.
 */
final class WebEvents {

    private static final boolean AVAILABLE = ModuleLayer.boot().findModule("jdk.jfr").isPresent();

    private WebEvents() {
    }

    @Name("io.cosched.RequestShed")
    @Label("Request Shed")
    @Category({"cosched", "Web"})
    @Description("A coroutine request answered 503 because cosched.web.max-in-flight were running")
    @StackTrace(false)
    static final class Shed extends Event {
        @Label("Method") String method;
        @Label("Path") String path;
        @Label("Before WebFlux") @Description("answered in the connection's pipeline, before WebFlux saw it") boolean beforeWebFlux;
        @Label("In-Flight Limit") int limit;
    }

    @Name("io.cosched.RequestTimeout")
    @Label("Request Timeout")
    @Category({"cosched", "Web"})
    @Description("A coroutine request answered 503 after cosched.web.request-timeout; its handler is interrupted")
    @StackTrace(false)
    static final class Timeout extends Event {
        @Label("Method") String method;
        @Label("Path") String path;
        @Label("Timeout") @Timespan(Timespan.NANOSECONDS) long timeout;
    }

    @Name("io.cosched.RequestCancelled")
    @Label("Request Cancelled")
    @Category({"cosched", "Web"})
    @Description("Spring cancelled a coroutine request before its handler finished: the client went away, or a filter gave up")
    @StackTrace(false)
    static final class Cancelled extends Event {
        @Label("Method") String method;
        @Label("Path") String path;
        @Label("Age") @Description("since the request was admitted") @Timespan(Timespan.NANOSECONDS) long age;
        @Label("Handler Interrupted") boolean interrupted;
    }

    /** A request shed by WebFlux's adapter ({@code exchange} null: a hand-off of Spring's blocking execution). */
    static void shed(@Nullable ServerWebExchange exchange, int limit) {
        if (!AVAILABLE) {
            return;
        }
        Shed e = new Shed();
        if (e.isEnabled()) {
            e.method = exchange == null ? "" : exchange.getRequest().getMethod().name();
            e.path = exchange == null ? "" : path(exchange);
            e.limit = limit;
            e.commit();
        }
    }

    /** A request shed in the pipeline: what the request line says. */
    static void shedEarly(String method, String uri, int limit) {
        if (!AVAILABLE) {
            return;
        }
        Shed e = new Shed();
        if (e.isEnabled()) {
            String path = ShedRoutes.pathOf(uri);
            e.method = method;
            e.path = path == null ? uri : path;
            e.beforeWebFlux = true;
            e.limit = limit;
            e.commit();
        }
    }

    static void timeout(ServerWebExchange exchange, long timeoutNanos) {
        if (!AVAILABLE) {
            return;
        }
        Timeout e = new Timeout();
        if (e.isEnabled()) {
            e.method = exchange.getRequest().getMethod().name();
            e.path = path(exchange);
            e.timeout = timeoutNanos;
            e.commit();
        }
    }

    static void cancelled(ServerWebExchange exchange, long ageNanos, boolean interrupted) {
        if (!AVAILABLE) {
            return;
        }
        Cancelled e = new Cancelled();
        if (e.isEnabled()) {
            e.method = exchange.getRequest().getMethod().name();
            e.path = path(exchange);
            e.age = ageNanos;
            e.interrupted = interrupted;
            e.commit();
        }
    }

    /** The matched handler's path pattern, else the request's path (no query). */
    static String path(ServerWebExchange exchange) {
        Object pattern = exchange.getAttribute(HandlerMapping.BEST_MATCHING_PATTERN_ATTRIBUTE);
        if (pattern instanceof PathPattern p) {
            return p.getPatternString();
        }
        ServerHttpRequest request = exchange.getRequest();
        return request.getPath().value();
    }
}
