package io.cosched.spring.boot.autoconfigure;

import io.cosched.Arguments;
import io.cosched.Transport;
import io.cosched.spring.web.server.StreamLimits;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.ConfigurationProperties;

import java.time.Duration;

/**
 * The {@code cosched.*} properties. Every value is checked when it is bound, so a bad one stops
 * start-up with the property, its value and the rule.
 */
@ConfigurationProperties("cosched")
public class CoschedProperties {

    /** Whether cosched is on: its scheduler beans, the HTTP server on its event loops, and coroutine handlers. */
    private boolean enabled = true;

    private final Pool scheduler = new Pool();

    private final Io io = new Io();

    private final Carrier carrier = new Carrier();

    private final Web web = new Web();

    private final Shutdown shutdown = new Shutdown();

    private final Stall stall = new Stall();

    private final Http http = new Http();

    private final Jdbc jdbc = new Jdbc();

    private final Redis redis = new Redis();

    private final WebClient webClient = new WebClient();

    private final Security security = new Security();

    public boolean isEnabled() {
        return enabled;
    }

    public void setEnabled(boolean enabled) {
        this.enabled = enabled;
    }

    public Pool getScheduler() {
        return scheduler;
    }

    public Io getIo() {
        return io;
    }

    public Carrier getCarrier() {
        return carrier;
    }

    public Web getWeb() {
        return web;
    }

    public Shutdown getShutdown() {
        return shutdown;
    }

    public Stall getStall() {
        return stall;
    }

    public Http getHttp() {
        return http;
    }

    public Jdbc getJdbc() {
        return jdbc;
    }

    public Redis getRedis() {
        return redis;
    }

    public WebClient getWebClient() {
        return webClient;
    }

    public Security getSecurity() {
        return security;
    }

    /** What both scheduler beans are given: a name and a number of carrier threads. */
    public abstract static class Carriers {

        /** Name of the scheduler; its carrier threads (event loops, for cosched.io) are named <name>-<index>. */
        private String name;

        /** Carrier threads (for cosched.io: event loops, which serve HTTP too). Defaults to the number of available processors. */
        private int threads = Runtime.getRuntime().availableProcessors();

        Carriers(String name) {
            this.name = name;
        }

        public String getName() {
            return name;
        }

        public void setName(String name) {
            this.name = Arguments.nonBlank("name", name);
        }

        public int getThreads() {
            return threads;
        }

        public void setThreads(int threads) {
            this.threads = Arguments.positive("threads", threads);
        }
    }

    /**
     * The PoolScheduler bean (sylar's N-M scheduler) for coroutines that need no event loop; bound
     * from {@code cosched.scheduler.*}, named {@code cosched} unless told otherwise.
     */
    public static class Pool extends Carriers {

        /** Whether the thread that stops the PoolScheduler serves as its last carrier while draining (sylar's use_caller). */
        private boolean useCaller;

        public Pool() {
            super("cosched");
        }

        public boolean isUseCaller() {
            return useCaller;
        }

        public void setUseCaller(boolean useCaller) {
            this.useCaller = useCaller;
        }
    }

    /** The IOManager bean: Netty event loops that carry coroutines and also serve HTTP; named {@code cosched-io} unless told otherwise. */
    public static class Io extends Carriers {

        /** I/O transport of the event loops: auto (epoll where available, else nio), epoll or nio. */
        private Transport transport = Transport.AUTO;

        public Io() {
            super("cosched-io");
        }

        public Transport getTransport() {
            return transport;
        }

        public void setTransport(Transport transport) {
            this.transport = transport;
        }
    }

    /** How coroutines get their carriers. */
    public static class Carrier {

        /**
         * Whether start-up fails when coroutines cannot run on cosched's carriers (the JVM lacks
         * --add-opens java.base/java.lang=ALL-UNNAMED) instead of falling back to ordinary virtual threads.
         */
        private boolean require;

        public boolean isRequire() {
            return require;
        }

        public void setRequire(boolean require) {
            this.require = require;
        }
    }

    /** Blocking WebFlux handlers as coroutines. */
    public static class Web {

        /** Which handlers run as coroutines: annotated (only @RunAsCoroutine), all (every blocking handler) or off. */
        private WebMode mode = WebMode.ANNOTATED;

        /** How long a coroutine handler may take before it is interrupted and the request answered with 503; none by default. */
        private @Nullable Duration requestTimeout;

        /** How many coroutine requests may run at once; beyond it new ones are answered at once with 503 and Retry-After. No limit by default. */
        private @Nullable Integer maxInFlight;

        /** Whether a request whose client went away (Spring cancels it) interrupts its handler's coroutine; off lets handlers finish anyway. */
        private boolean cancelOnDisconnect = true;

        /**
         * Whether requests over max-in-flight on routes that surely run as coroutines are answered 503 by a handler in the
         * connection's pipeline (HTTP/1.1), before WebFlux's exchange, filters and handler lookup; off sheds them in WebFlux.
         */
        private boolean shedBeforeWebflux = true;

        /** The coschedShedding health contributor, for the readiness probe of instances behind a load balancer. */
        private final Readiness readiness = new Readiness();

        /**
         * Whether WebFlux's in-memory session store is cosched's, which makes a new session on the thread that asks
         * for it: Spring's hops to boundedElastic and then parallel for every new session, and Spring Security asks
         * for one on every request without a session cookie. Off keeps Spring Boot's store.
         */
        private boolean inlineSessions = true;

        /** Requests that read their body as a stream, or answer with one. */
        private final Stream stream = new Stream();

        public WebMode getMode() {
            return mode;
        }

        public void setMode(WebMode mode) {
            this.mode = mode;
        }

        public @Nullable Duration getRequestTimeout() {
            return requestTimeout;
        }

        public void setRequestTimeout(@Nullable Duration requestTimeout) {
            this.requestTimeout = requestTimeout == null ? null : Arguments.positive("request-timeout", requestTimeout);
        }

        public @Nullable Integer getMaxInFlight() {
            return maxInFlight;
        }

        public void setMaxInFlight(@Nullable Integer maxInFlight) {
            this.maxInFlight = maxInFlight == null ? null : Arguments.positive("max-in-flight", maxInFlight);
        }

        public boolean isCancelOnDisconnect() {
            return cancelOnDisconnect;
        }

        public void setCancelOnDisconnect(boolean cancelOnDisconnect) {
            this.cancelOnDisconnect = cancelOnDisconnect;
        }

        public Readiness getReadiness() {
            return readiness;
        }

        public boolean isShedBeforeWebflux() {
            return shedBeforeWebflux;
        }

        public void setShedBeforeWebflux(boolean shedBeforeWebflux) {
            this.shedBeforeWebflux = shedBeforeWebflux;
        }

        public boolean isInlineSessions() {
            return inlineSessions;
        }

        public void setInlineSessions(boolean inlineSessions) {
            this.inlineSessions = inlineSessions;
        }

        public Stream getStream() {
            return stream;
        }
    }

    /**
     * The limits of a request once it streams: once its handler reads its body as a stream, or its streamed
     * response (StreamingResponseBody, EventStream) has begun, the request timeout no longer applies, these do.
     */
    public static class Stream {

        /** How long one read of a body stream may wait for the client's next bytes; past it the request is answered 408. 0 for no limit. */
        private Duration readTimeout = Duration.ofSeconds(60);

        /**
         * How long one write of a streamed response may wait for the client to take more while its connection shows
         * no progress either; past it the stream is cut (the connection closes). None by default: socket buffers hide
         * a slowly reading client from a stalled one for minutes.
         */
        private @Nullable Duration writeTimeout;

        /** How long a request may stream in all, from the moment it begins to; past it its coroutine is interrupted. None by default. */
        private @Nullable Duration maxDuration;

        public Duration getReadTimeout() {
            return readTimeout;
        }

        public void setReadTimeout(Duration readTimeout) {
            this.readTimeout = Arguments.nonNegative("stream.read-timeout", readTimeout);
        }

        public @Nullable Duration getWriteTimeout() {
            return writeTimeout;
        }

        public void setWriteTimeout(@Nullable Duration writeTimeout) {
            this.writeTimeout = writeTimeout == null ? null : Arguments.positive("stream.write-timeout", writeTimeout);
        }

        public @Nullable Duration getMaxDuration() {
            return maxDuration;
        }

        public void setMaxDuration(@Nullable Duration maxDuration) {
            this.maxDuration = maxDuration == null ? null : Arguments.positive("stream.max-duration", maxDuration);
        }

        /** As the web module takes them. */
        public StreamLimits limits() {
            return new StreamLimits(readTimeout.isZero() ? null : readTimeout, writeTimeout, maxDuration);
        }
    }

    /** Which WebFlux handlers run as coroutines. */
    public enum WebMode {
        /** Only handlers annotated with {@code @RunAsCoroutine} (on the method or its class). */
        ANNOTATED,
        /** Every handler method whose return type is not reactive. */
        ALL,
        /** None: cosched leaves handler execution to Spring (the HTTP server still runs on cosched's loops). */
        OFF
    }

    /** Stopping the schedulers when the application context closes. */

    /** The coschedShedding health contributor: out of service while the instance sheds, with hysteresis. */
    public static class Readiness {

        /** Whether the coschedShedding health contributor exists (add it to the readiness group). */
        private boolean enabled;

        /** Share of coroutine requests shed over a probe's window (at least 1 s) that takes the instance out of service. */
        private double refuseAt = 0.1;

        /** Share under which a window counts as calm; must not exceed refuse-at. */
        private double acceptBelow = 0.01;

        /** How long the calm must last before the instance is in service again. */
        private Duration hold = Duration.ofSeconds(20);

        public boolean isEnabled() {
            return enabled;
        }

        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }

        public double getRefuseAt() {
            return refuseAt;
        }

        public void setRefuseAt(double refuseAt) {
            this.refuseAt = refuseAt;
        }

        public double getAcceptBelow() {
            return acceptBelow;
        }

        public void setAcceptBelow(double acceptBelow) {
            this.acceptBelow = acceptBelow;
        }

        public Duration getHold() {
            return hold;
        }

        public void setHold(Duration hold) {
            this.hold = hold;
        }
    }

    public static class Shutdown {

        /** How long stopping waits for coroutines to finish; what is left goes on running on the JDK's default scheduler. */
        private Duration timeout = Duration.ofSeconds(30);

        public Duration getTimeout() {
            return timeout;
        }

        public void setTimeout(Duration timeout) {
            this.timeout = Arguments.nonNegative("timeout", timeout);
        }
    }

    /** The stall watchdog of every scheduler cosched builds. */
    public static class Stall {

        /**
         * How long a carrier may stay inside one task before it is reported (WARN with the stack),
         * counted in the stalls meter, and its work moves elsewhere: queued continuations, and an event
         * loop's due timers; new connections skip a loop in one task for a tenth of it. A carrier that
         * got no CPU meanwhile counts as a starvation instead. 0 turns the watchdog off.
         */
        private Duration threshold = Duration.ofMillis(100);

        /**
         * How long after start a stall counts as the JVM warming up (class loading, code not compiled yet): one INFO
         * line without the stack, counted in warmUpStalls (meter cosched.stalls.warmup) rather than stalls; its work
         * moves as for any stall. A stall in code that loads classes counts as warm-up at any time. 0: only those.
         */
        private Duration warmUp = Duration.ofSeconds(60);

        public Duration getThreshold() {
            return threshold;
        }

        public Duration getWarmUp() {
            return warmUp;
        }

        public void setWarmUp(Duration warmUp) {
            this.warmUp = Arguments.nonNegative("warmUp", warmUp);
        }

        public void setThreshold(Duration threshold) {
            this.threshold = Arguments.nonNegative("threshold", threshold);
        }
    }

    /** HTTP clients whose connections live on cosched's event loops. */
    public static class Http {

        private final Client client = new Client();

        public Client getClient() {
            return client;
        }

        /** RestClient and RestTemplate built from Spring Boot's builders. */
        public static class Client {

            /**
             * Whether RestClient and RestTemplate built from Spring Boot's builders send their requests over
             * connections on cosched's event loops: a call from a coroutine uses a connection of its own loop.
             */
            private boolean enabled = true;

            /** How long an idle connection is kept for reuse before it is closed. */
            private Duration idleTimeout = Duration.ofSeconds(30);

            public boolean isEnabled() {
                return enabled;
            }

            public void setEnabled(boolean enabled) {
                this.enabled = enabled;
            }

            public Duration getIdleTimeout() {
                return idleTimeout;
            }

            public void setIdleTimeout(Duration idleTimeout) {
                this.idleTimeout = Arguments.positive("idle-timeout", idleTimeout);
            }
        }
    }

    /** JDBC connections on cosched's event loops. */
    public static class Jdbc {

        /**
         * Whether a HikariCP DataSource for PostgreSQL, MariaDB or MySQL gets its connections on cosched's event
         * loops: one pool per loop behind the one DataSource, and a coroutine borrows from the pool of its own loop.
         */
        private boolean enabled = true;

        /**
         * How long a statement may run on after the coroutine that runs it was interrupted (its request was
         * cancelled or timed out) before PostgreSQL is asked to cancel it. The interrupt itself waits until the
         * connection is back in its pool, so that it never breaks the connection.
         */
        private Duration cancelStatementsAfter = Duration.ofSeconds(1);

        public boolean isEnabled() {
            return enabled;
        }

        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }

        public Duration getCancelStatementsAfter() {
            return cancelStatementsAfter;
        }

        public void setCancelStatementsAfter(Duration cancelStatementsAfter) {
            this.cancelStatementsAfter = Arguments.nonNegative("cancel-statements-after", cancelStatementsAfter);
        }
    }

    /** Spring Security in a reactive application. */
    public static class Security {

        /**
         * Where Spring Security checks a presented password (HTTP basic, form login): compute (cosched's
         * compute pool, one thread per core), loop (on the thread that asked, usually the request's event
         * loop: no hand-off, for cheap encoders only) or bounded-elastic (Spring Security's own choice, left
         * alone).
         */
        private PasswordCheck passwordCheck = PasswordCheck.COMPUTE;

        public PasswordCheck getPasswordCheck() {
            return passwordCheck;
        }

        public void setPasswordCheck(PasswordCheck passwordCheck) {
            this.passwordCheck = passwordCheck;
        }
    }

    /** Where Spring Security's reactive authentication checks a password against its hash. */
    public enum PasswordCheck {
        /**
         * On cosched's compute pool (one platform thread per core): a hash such as bcrypt costs tens of
         * milliseconds of CPU, which an event loop must not spend; the request then goes back to its
         * connection's loop for its coroutine handler.
         */
        COMPUTE,
        /**
         * On the thread that asked, usually the request's event loop: no hand-off at all. Only
         * for encoders that cost microseconds; a bcrypt check holds the loop and every connection on it.
         */
        LOOP,
        /** Where Spring Security puts it by default, Reactor's {@code boundedElastic} scheduler; cosched changes nothing. */
        BOUNDED_ELASTIC
    }

    /** Redis through Spring Data Redis and Lettuce. */
    public static class Redis {

        /**
         * Whether Spring Boot's Lettuce connection factory gives coroutines connections of their own event loop:
         * one Lettuce client per loop behind the one factory, so the loop that reads a reply resumes the
         * coroutine that waits for it. Standalone, Sentinel and Unix-socket setups; Redis Cluster and static
         * master/replica keep Lettuce's own threads.
         */
        private boolean enabled = true;

        public boolean isEnabled() {
            return enabled;
        }

        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }
    }

    /** Reactor Netty clients on cosched's loops: Spring Boot's {@code WebClient.Builder} and {@code ClientHttpConnector}. */
    public static class WebClient {

        /**
         * Whether Reactor Netty clients made from the application's ReactorResourceFactory (Spring Boot's
         * WebClient.Builder) keep one connection pool per event loop: a coroutine that blocks on a call takes a
         * connection of its own loop, which resumes it; a reactive caller on a loop keeps its connections there.
         */
        private boolean enabled = true;

        /**
         * Whether a WebClient on Spring Boot's connector sends the calls of coroutines over cosched's own HTTP client
         * on the coroutine's loop (LoopHttpClient, no Reactor Netty client in between); reactive callers keep Reactor
         * Netty either way. Needs enabled.
         */
        private boolean loopClient = true;

        /**
         * Whether Reactor Netty's global HTTP resources, which clients not made from Spring Boot's builder use
         * (WebClient.create(), Spring Security's JWK set client), run on the IOManager's event loops rather than on
         * Reactor Netty's own reactor-http threads; given back when the context closes.
         */
        private boolean globalLoops = true;

        public boolean isGlobalLoops() {
            return globalLoops;
        }

        public void setGlobalLoops(boolean globalLoops) {
            this.globalLoops = globalLoops;
        }

        public boolean isEnabled() {
            return enabled;
        }

        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }

        public boolean isLoopClient() {
            return loopClient;
        }

        public void setLoopClient(boolean loopClient) {
            this.loopClient = loopClient;
        }
    }
}
