package io.cosched.spring.web.server;

import io.cosched.Arguments;
import io.cosched.IOManager;
import io.cosched.Internal;
import io.cosched.spring.web.BlockingWebSocketHandler;
import io.cosched.spring.web.CoroutineHandlers;
import io.cosched.spring.web.CoschedWebStats;
import io.cosched.spring.web.context.ContextRestorer;
import io.cosched.spring.web.netty.ServerChannels;
import io.cosched.spring.web.stream.OpenStreams;
import io.cosched.spring.web.stream.RequestStreams;
import io.cosched.spring.web.stream.StreamLimits;
import io.cosched.spring.web.stream.StreamingSupport;
import io.netty.channel.Channel;
import io.netty.channel.EventLoop;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.Callable;
import java.util.concurrent.Executor;
import java.util.function.Function;
import java.util.function.Predicate;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import org.springframework.core.task.AsyncTaskExecutor;
import org.springframework.http.HttpStatus;
import org.springframework.web.method.HandlerMethod;
import org.springframework.web.reactive.result.method.annotation.RequestMappingHandlerAdapter;
import org.springframework.web.reactive.socket.WebSocketHandler;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebExceptionHandler;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.Mono;

/**
 * cosched's request handling for WebFlux, the one entry point of this package: each blocking handler
 * of a request runs as one coroutine on the event loop that owns the request's connection, which
 * cosched starts itself with the request in hand, whatever thread the request reached it on (a
 * filter such as Spring Security's password check may have moved it to another scheduler). The request holds an in-flight slot (or is shed with 503), has a
 * deadline (503 when it passes) and is cancelled when Spring cancels it (the client went away); the
 * slot is given back when the coroutine's code has returned.
 *
 * <p>Spring Boot applications get all of it from the starter. Without Spring Boot:
 * {@link #handlerAdapter()} as the {@code RequestMappingHandlerAdapter},
 * {@link #blockingExecutor()} and {@link #selector()} for
 * {@code WebFluxConfigurer.configureBlockingExecution}, {@link #exceptionHandler()} as a bean, and
 * {@link #call} for functional endpoints (what {@link CoroutineHandlers} uses), {@link #stats()} for the numbers.
 */
public final class CoroutineRequests implements CoroutineHandlers.Runner {

    private final IOManager io;
    private final Admission admission;
    private final RequestServices services;
    private final RequestPolicy policy;
    private final CoroutineHandlerSelector selector;
    private final CoroutineHandlerExecutor executor;
    // the IOManager's loops in index order when coroutines run on them (carrier mode), else empty;
    // known once the IOManager runs, so read at the first request
    private volatile IOLoop @Nullable [] loops;

    /**
     * Prefer {@link #builder(IOManager)}, which names each setting.
     *
     * @param io                 whose loops serve the requests and carry their coroutines
     * @param timeout            how long a handler may take before it is interrupted and 503 answered; null for none
     * @param maxInFlight        how many coroutine requests may run at once; null for none
     * @param cancelOnDisconnect whether a request Spring cancels (client gone) interrupts its handler
     * @param annotatedOnly      only handlers marked {@link io.cosched.spring.web.RunAsCoroutine}, or every blocking one
     * @param streams            the limits of a request once it streams its body or its response
     */
    public CoroutineRequests(
            IOManager io,
            @Nullable Duration timeout,
            @Nullable Integer maxInFlight,
            boolean cancelOnDisconnect,
            boolean annotatedOnly,
            StreamLimits streams) {
        this(io, timeout, maxInFlight, cancelOnDisconnect, annotatedOnly, streams, Duration.ofSeconds(1));
    }

    /**
     * As above, and {@code retryAfterMax}: a shed request's {@code Retry-After} is drawn at random from 1 s to it, in
     * whole seconds (1 s: always 1); from 1 s to 1 h.
     */
    public CoroutineRequests(
            IOManager io,
            @Nullable Duration timeout,
            @Nullable Integer maxInFlight,
            boolean cancelOnDisconnect,
            boolean annotatedOnly,
            StreamLimits streams,
            Duration retryAfterMax) {
        this(
                io,
                timeout,
                AdmissionControl.fixed(maxInFlight).withRetryAfterMax(retryAfterMax),
                cancelOnDisconnect,
                annotatedOnly,
                streams);
    }

    /**
     * Prefer {@link #builder(IOManager)}, which names each setting.
     *
     * @param io                 whose loops serve the requests and carry their coroutines
     * @param timeout            how long a handler may take before it is interrupted and 503 answered; null for none
     * @param admission          the in-flight limit, the queue over it and how a shed request is answered
     * @param cancelOnDisconnect whether a request Spring cancels (client gone) interrupts its handler
     * @param annotatedOnly      only handlers marked {@link io.cosched.spring.web.RunAsCoroutine}, or every blocking one
     * @param streams            the limits of a request once it streams its body or its response
     */
    public CoroutineRequests(
            IOManager io,
            @Nullable Duration timeout,
            AdmissionControl admission,
            boolean cancelOnDisconnect,
            boolean annotatedOnly,
            StreamLimits streams) {
        this.io = io;
        this.admission = new Admission(io, admission);
        this.services = new RequestServices(io, this.admission, this.admission.counts(), new OpenStreams(io.timers()));
        this.policy = new RequestPolicy(
                timeout == null ? null : Arguments.positive("timeout", timeout),
                cancelOnDisconnect,
                ContextRestorer.detect(),
                streams);
        this.selector = new CoroutineHandlerSelector(annotatedOnly);
        this.executor = new CoroutineHandlerExecutor(services);
    }

    /**
     * Requests served on {@code io}'s loops, with the starter's defaults: no timeout, no in-flight limit, a request
     * whose client left interrupts its handler, only {@link io.cosched.spring.web.RunAsCoroutine} handlers, the
     * default stream time limits. Set what differs, then {@link Builder#build()}.
     */
    public static Builder builder(IOManager io) {
        return new Builder(Objects.requireNonNull(io, "io"));
    }

    /** The settings of a {@link CoroutineRequests}, named one by one. Not thread-safe; build once. */
    public static final class Builder {
        private final IOManager io;
        private @Nullable Duration timeout;
        private AdmissionControl admission = AdmissionControl.fixed(null);
        private boolean cancelOnDisconnect = true;
        private boolean annotatedOnly = true;
        private StreamLimits streams = StreamLimits.DEFAULT;

        private Builder(IOManager io) {
            this.io = io;
        }

        /** How long a handler may take before it is interrupted and 503 answered; null (the default) for no limit. */
        public Builder timeout(@Nullable Duration timeout) {
            this.timeout = timeout == null ? null : Arguments.positive("timeout", timeout);
            return this;
        }

        /** The in-flight limit, the queue over it and how a shed request is answered (default: no limit). */
        public Builder admission(AdmissionControl admission) {
            this.admission = Objects.requireNonNull(admission, "admission");
            return this;
        }

        /** Whether a request Spring cancels (its client went away) interrupts its handler (default: true). */
        public Builder cancelOnDisconnect(boolean cancel) {
            this.cancelOnDisconnect = cancel;
            return this;
        }

        /**
         * Which handlers run as coroutines: only those marked {@link io.cosched.spring.web.RunAsCoroutine} (true, the
         * default, {@code cosched.web.mode=annotated}) or every blocking one (false, {@code cosched.web.mode=all}).
         */
        public Builder annotatedOnly(boolean annotatedOnly) {
            this.annotatedOnly = annotatedOnly;
            return this;
        }

        /** The limits of a request once it streams its body or its response (default: {@link StreamLimits#DEFAULT}). */
        public Builder streams(StreamLimits streams) {
            this.streams = Objects.requireNonNull(streams, "streams");
            return this;
        }

        public CoroutineRequests build() {
            return new CoroutineRequests(io, timeout, admission, cancelOnDisconnect, annotatedOnly, streams);
        }
    }

    /**
     * Runs {@code handling} in a new coroutine on the loop of {@code exchange}'s connection and emits
     * its outcome on that loop. {@code handling} gets an executor that runs tasks in that coroutine: a
     * publisher it waits for should deliver there (see {@code publishOn}).
     */
    public <T> Mono<T> run(ServerWebExchange exchange, Function<Executor, Mono<T>> handling) {
        return serve(exchange, handling::apply);
    }

    /** {@link #run}, with the request itself in hand: for what streams its body or its response. */
    <T> Mono<T> serve(ServerWebExchange exchange, Function<InFlightRequest<T>, Mono<T>> handling) {
        return new Mono<T>() {
            @Override
            public void subscribe(CoreSubscriber<? super T> actual) {
                new InFlightRequest<>(services, policy, exchange, actual, handling, loopOf(exchange)).start();
            }
        };
    }

    /** Calls {@code handler} in a new coroutine on the loop of {@code exchange}'s connection; for a blocking functional endpoint. */
    @Override
    public <T> Mono<T> call(ServerWebExchange exchange, Callable<? extends Mono<T>> handler) {
        return serve(
                exchange,
                request -> Mono.defer(() -> {
                    RequestStreams.register(exchange, request); // for a streamed body it may answer with
                    try {
                        return handler.call();
                    } catch (Exception e) {
                        return Mono.error(e);
                    }
                }));
    }

    /**
     * A functional handler's streamed body: produced in its request's coroutine when the handler runs as one
     * ({@link #call}), else detached, as a coroutine of its own.
     */
    @Override
    public Publisher<?> stream(ServerWebExchange exchange, Object streamedAnswer) {
        return StreamingSupport.respond(streamedAnswer, exchange, io, policy.streams());
    }

    /**
     * Each connection served by {@code handler} in a coroutine of its own on the connection's loop (Reactor Netty
     * calls a WebSocket handler there once the handshake is done), with the handshake's context; its outbound stream
     * ends at the server's shutdown as an event stream does. Not admitted against the in-flight limit: a WebSocket
     * lives as long as its client keeps it.
     */
    @Override
    public WebSocketHandler webSocket(BlockingWebSocketHandler handler) {
        return StreamingSupport.webSocket(
                handler, task -> io.spawn(task), policy.streams(), io.timers(), policy.restorer(), services.streams());
    }

    /**
     * Ends the streamed responses of these requests for the server's shutdown; returns at once. A stream written as
     * server-sent events is told now: its producer's next send throws a {@link io.cosched.spring.web.StreamClosedException}
     * ({@code SHUTDOWN}), a wait of it is interrupted, and the response ends cleanly however the producer lets that
     * out, so that its client reconnects, to another instance. Any other stream (JSON lines, bytes) goes on for
     * {@code grace}, and is then cut by closing its connection: a body cut short must not look whole. A stream
     * that opens afterwards is treated the same at once. Streams of handlers that do not run as coroutine requests
     * are left to the server. Only the first call counts.
     *
     * @param grace how long streams other than server-sent events may go on; zero cuts them now
     */
    public void endStreams(Duration grace) {
        services.streams().endAll(Arguments.nonNegative("grace", grace));
    }

    /** What these requests did: in flight, timed out, shed, cancelled (read-only; counted here). */
    public CoschedWebStats stats() {
        return services.counts();
    }

    /** Spring's adapter for annotated handlers, which runs the {@link #selector() selected} ones as coroutine requests. */
    public RequestMappingHandlerAdapter handlerAdapter() {
        return new CoroutineHandlerAdapter(this);
    }

    /** For Spring's blocking execution: inline in a request's coroutine, else a coroutine of its own. */
    public AsyncTaskExecutor blockingExecutor() {
        return executor;
    }

    /** Which handler methods run as coroutines: not reactive, and in annotated mode marked {@code @RunAsCoroutine}. */
    public Predicate<HandlerMethod> selector() {
        return selector;
    }

    /** The in-flight limit these requests are admitted by, for shedding before WebFlux ({@code EarlyShedding}). */
    @Internal
    public Admission admission() {
        return admission;
    }

    /** Answers timed-out and shed requests with 503; ordered ahead of Spring Boot's error handler. */
    public WebExceptionHandler exceptionHandler() {
        return exceptionHandler(HttpStatus.SERVICE_UNAVAILABLE);
    }

    /**
     * Answers shed requests with 503 and timed-out ones with {@code timeoutStatus} (503, or 504 to tell them apart:
     * a timed-out handler had begun, a shed one had not); ordered ahead of Spring Boot's error handler.
     */
    public WebExceptionHandler exceptionHandler(HttpStatus timeoutStatus) {
        if (timeoutStatus != HttpStatus.SERVICE_UNAVAILABLE && timeoutStatus != HttpStatus.GATEWAY_TIMEOUT) {
            throw new IllegalArgumentException("timeoutStatus: " + timeoutStatus + " (must be 503 or 504)");
        }
        return new UnavailableResponses(timeoutStatus, admission.status(), admission::retryAfterSeconds);
    }

    /**
     * The loop of the exchange's connection, where its coroutine runs and its outcome goes back to:
     * when it is one of the IOManager's loops and coroutines run on the loops (carrier mode). In
     * fallback mode a coroutine runs on the JDK's scheduler and hands its outcome straight to Spring,
     * as Spring's own virtual-thread executor does: a hop back to the loop would cost a wake-up of the
     * loop per request (1.4 context switches per request against 0.3 on a blocking hello world,
     * docs/benchmark-results.md).
     */
    private @Nullable IOLoop loopOf(ServerWebExchange exchange) {
        IOLoop[] all = loops;
        if (all == null) {
            loops = all = carrierLoops(); // fixed once the IOManager runs
        }
        if (all.length == 0) {
            return null;
        }
        Channel channel = ServerChannels.of(exchange.getRequest());
        if (channel == null) {
            return null; // not served by Reactor Netty, or by no server (a WebTestClient bound to a router)
        }
        EventLoop own = channel.eventLoop();
        for (IOLoop l : all) {
            if (l.eventLoop() == own) {
                return l;
            }
        }
        return null; // a server on other loops than cosched's
    }

    private IOLoop[] carrierLoops() {
        if (!io.isCarrierMode()) {
            return new IOLoop[0];
        }
        IOLoop[] all = new IOLoop[io.threads()];
        for (int i = 0; i < all.length; i++) {
            all[i] = new IOLoop(io.eventLoop(i), i);
        }
        return all;
    }

    /** One of the IOManager's loops: its Netty event loop, and its index among the loops (what {@code spawnOn} takes). */
    record IOLoop(EventLoop eventLoop, int index) {}
}
