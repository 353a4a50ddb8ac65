package io.cosched.spring.boot.autoconfigure;

import io.cosched.Transport;
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

    private final Scheduler scheduler = new Scheduler();

    private final Io io = new Io();

    private final Carrier carrier = new Carrier();

    private final Web web = new Web();

    private final Shutdown shutdown = new Shutdown();

    private final Stall stall = new Stall();

    private final Http http = new Http();

    private final Jdbc jdbc = new Jdbc();

    public boolean isEnabled() {
        return enabled;
    }

    public void setEnabled(boolean enabled) {
        this.enabled = enabled;
    }

    public Scheduler getScheduler() {
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

    /** The PoolScheduler bean (sylar's N-M scheduler) for coroutines that need no event loop. */
    public static class Scheduler {

        /** Name of the PoolScheduler; its carrier threads are named <name>-<index>. */
        private String name = "cosched";

        /** Carrier threads of the PoolScheduler. Defaults to the number of available processors. */
        private int threads = Runtime.getRuntime().availableProcessors();

        /** Whether the thread that stops the PoolScheduler serves as its last carrier while draining (sylar's use_caller). */
        private boolean useCaller;

        public String getName() {
            return name;
        }

        public void setName(String name) {
            this.name = checkName(name);
        }

        public int getThreads() {
            return threads;
        }

        public void setThreads(int threads) {
            this.threads = checkThreads(threads);
        }

        public boolean isUseCaller() {
            return useCaller;
        }

        public void setUseCaller(boolean useCaller) {
            this.useCaller = useCaller;
        }
    }

    /** The IOManager bean: Netty event loops that carry coroutines and also serve HTTP. */
    public static class Io {

        /** Name of the IOManager; its event loop threads are named <name>-<index>. */
        private String name = "cosched-io";

        /** Event loops; the HTTP server runs on them too. Defaults to the number of available processors. */
        private int threads = Runtime.getRuntime().availableProcessors();

        /** I/O transport of the event loops: auto (epoll where available, else nio), epoll or nio. */
        private Transport transport = Transport.AUTO;

        public String getName() {
            return name;
        }

        public void setName(String name) {
            this.name = checkName(name);
        }

        public int getThreads() {
            return threads;
        }

        public void setThreads(int threads) {
            this.threads = checkThreads(threads);
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
            if (requestTimeout != null && (requestTimeout.isNegative() || requestTimeout.isZero())) {
                throw new IllegalArgumentException("request-timeout: " + requestTimeout + " (expected: > 0, or unset for none)");
            }
            this.requestTimeout = requestTimeout;
        }

        public @Nullable Integer getMaxInFlight() {
            return maxInFlight;
        }

        public void setMaxInFlight(@Nullable Integer maxInFlight) {
            if (maxInFlight != null && maxInFlight <= 0) {
                throw new IllegalArgumentException("max-in-flight: " + maxInFlight + " (expected: > 0, or unset for no limit)");
            }
            this.maxInFlight = maxInFlight;
        }

        public boolean isCancelOnDisconnect() {
            return cancelOnDisconnect;
        }

        public void setCancelOnDisconnect(boolean cancelOnDisconnect) {
            this.cancelOnDisconnect = cancelOnDisconnect;
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
    public static class Shutdown {

        /** How long stopping waits for coroutines to finish; what is left goes on running on the JDK's default scheduler. */
        private Duration timeout = Duration.ofSeconds(30);

        public Duration getTimeout() {
            return timeout;
        }

        public void setTimeout(Duration timeout) {
            if (timeout == null || timeout.isNegative()) {
                throw new IllegalArgumentException("timeout: " + timeout + " (expected: >= 0)");
            }
            this.timeout = timeout;
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

        public Duration getThreshold() {
            return threshold;
        }

        public void setThreshold(Duration threshold) {
            if (threshold == null || threshold.isNegative()) {
                throw new IllegalArgumentException("threshold: " + threshold + " (expected: >= 0; 0 turns the watchdog off)");
            }
            this.threshold = threshold;
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
                if (idleTimeout == null || idleTimeout.isNegative() || idleTimeout.isZero()) {
                    throw new IllegalArgumentException("idle-timeout: " + idleTimeout + " (expected: > 0)");
                }
                this.idleTimeout = idleTimeout;
            }
        }
    }

    /** JDBC connections on cosched's event loops. */
    public static class Jdbc {

        /**
         * Whether a HikariCP DataSource for PostgreSQL gets its connections on cosched's event loops: one pool
         * per loop behind the one DataSource, and a coroutine borrows from the pool of its own loop.
         */
        private boolean enabled = true;

        public boolean isEnabled() {
            return enabled;
        }

        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }
    }

    private static String checkName(String name) {
        if (name == null || name.isBlank()) {
            throw new IllegalArgumentException("name: '" + name + "' (expected: a non-blank name)");
        }
        return name;
    }

    private static int checkThreads(int threads) {
        if (threads <= 0) {
            throw new IllegalArgumentException("threads: " + threads + " (expected: > 0)");
        }
        return threads;
    }
}
