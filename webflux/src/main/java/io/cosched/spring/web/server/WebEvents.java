package io.cosched.spring.web.server;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
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
 *
 * <p>Each type is recorded at most {@value #PER_SECOND} times a second: under overload a shed can
 * happen 150,000 times a second, and an event for each wrote 4 MB a second into a recording: one
 * bounded at 250 MB would hold the last minute and nothing older, the stalls among it. The events
 * left out are counted in the next one recorded ({@code notRecordedBefore}), so a recording's counts
 * add up to every shed, timeout and cancellation up to its last event of the type.
 */
final class WebEvents {

    private static final boolean AVAILABLE =
            ModuleLayer.boot().findModule("jdk.jfr").isPresent();

    /** The most events of one type recorded in a second. */
    static final int PER_SECOND = 100;

    private static final String NOT_RECORDED = "events of this type left out since the previous one recorded: "
            + "at most " + PER_SECOND + " are recorded a second";

    private static final Rate SHEDS = new Rate(PER_SECOND, System::nanoTime);
    private static final Rate TIMEOUTS = new Rate(PER_SECOND, System::nanoTime);
    private static final Rate CANCELLATIONS = new Rate(PER_SECOND, System::nanoTime);

    private WebEvents() {}

    @Name("io.cosched.RequestShed")
    @Label("Request Shed")
    @Category({"cosched", "Web"})
    @Description("A coroutine request answered 503 because cosched.web.max-in-flight were running")
    @StackTrace(false)
    static final class Shed extends Event {
        @Label("Method")
        @Nullable
        String method; // null until set, as in an event that is not recorded

        @Label("Path")
        @Nullable
        String path;

        @Label("Before WebFlux")
        @Description("answered in the connection's pipeline, before WebFlux saw it")
        boolean beforeWebFlux;

        @Label("In-Flight Limit")
        int limit;

        @Label("Not Recorded Before")
        @Description(NOT_RECORDED)
        long notRecordedBefore;
    }

    @Name("io.cosched.RequestTimeout")
    @Label("Request Timeout")
    @Category({"cosched", "Web"})
    @Description("A coroutine request answered 503 after cosched.web.request-timeout; its handler is interrupted")
    @StackTrace(false)
    static final class Timeout extends Event {
        @Label("Method")
        @Nullable
        String method; // null until set, as in an event that is not recorded

        @Label("Path")
        @Nullable
        String path;

        @Label("Timeout")
        @Timespan(Timespan.NANOSECONDS)
        long timeout;

        @Label("Not Recorded Before")
        @Description(NOT_RECORDED)
        long notRecordedBefore;
    }

    @Name("io.cosched.RequestCancelled")
    @Label("Request Cancelled")
    @Category({"cosched", "Web"})
    @Description(
            "Spring cancelled a coroutine request before its handler finished: the client went away, or a filter gave up")
    @StackTrace(false)
    static final class Cancelled extends Event {
        @Label("Method")
        @Nullable
        String method; // null until set, as in an event that is not recorded

        @Label("Path")
        @Nullable
        String path;

        @Label("Age")
        @Description("since the request was admitted")
        @Timespan(Timespan.NANOSECONDS)
        long age;

        @Label("Handler Interrupted")
        boolean interrupted;

        @Label("Not Recorded Before")
        @Description(NOT_RECORDED)
        long notRecordedBefore;
    }

    /** A request shed by WebFlux's adapter ({@code exchange} null: a hand-off of Spring's blocking execution). */
    static void shed(@Nullable ServerWebExchange exchange, int limit) {
        if (!AVAILABLE) {
            return;
        }
        Shed e = new Shed();
        if (e.isEnabled() && (e.notRecordedBefore = SHEDS.admit()) >= 0) {
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
        if (e.isEnabled() && (e.notRecordedBefore = SHEDS.admit()) >= 0) {
            String path = RequestTargets.pathOf(uri); // only for a recorded event: shedding is the cheap path
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
        if (e.isEnabled() && (e.notRecordedBefore = TIMEOUTS.admit()) >= 0) {
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
        if (e.isEnabled() && (e.notRecordedBefore = CANCELLATIONS.admit()) >= 0) {
            e.method = exchange.getRequest().getMethod().name();
            e.path = path(exchange);
            e.age = ageNanos;
            e.interrupted = interrupted;
            e.commit();
        }
    }

    /**
     * At most {@code perSecond} events in each second from the first one; the ones over are counted for
     * the next event let through. Loops share it: a second's count may go a few over when two start a
     * new second at once, which is fine for a limit on a recording's size.
     */
    static final class Rate {
        private static final long SECOND = 1_000_000_000L;

        private final int perSecond;
        private final LongSupplier nanoClock;
        private final AtomicInteger inWindow = new AtomicInteger();
        private final AtomicLong notRecorded = new AtomicLong();
        private volatile long windowStart;

        Rate(int perSecond, LongSupplier nanoClock) {
            this.perSecond = perSecond;
            this.nanoClock = nanoClock;
            this.windowStart = nanoClock.getAsLong() - SECOND; // the first event opens a window
        }

        /** -1 when this event is over the rate, else how many were left out since the last one let through. */
        long admit() {
            long now = nanoClock.getAsLong();
            if (now - windowStart >= SECOND) {
                windowStart = now;
                inWindow.set(0);
            }
            if (inWindow.incrementAndGet() > perSecond) {
                notRecorded.incrementAndGet();
                return -1;
            }
            return notRecorded.getAndSet(0);
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
