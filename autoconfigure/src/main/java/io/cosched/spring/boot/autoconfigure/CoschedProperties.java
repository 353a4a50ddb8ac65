package io.cosched.spring.boot.autoconfigure;

import io.cosched.Arguments;
import io.cosched.Transport;
import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The {@code cosched.*} properties of the runtime: on or off, the schedulers, carriers, stopping and the stall
 * watchdog. Each technology keeps its own next to its auto-configuration ({@code cosched.web.*},
 * {@code cosched.web-client.*}, {@code cosched.http.client.*}, {@code cosched.jdbc.*}, {@code cosched.redis.*},
 * {@code cosched.security.*}). Every value is checked when it is bound, so a bad one stops start-up with the
 * property, its value and the rule.
 */
@ConfigurationProperties("cosched")
public class CoschedProperties {

    /** Whether cosched is on: its scheduler beans, the HTTP server on its event loops, and coroutine handlers. */
    private boolean enabled = true;

    private final Pool scheduler = new Pool();

    private final Io io = new Io();

    private final Carrier carrier = new Carrier();

    private final Shutdown shutdown = new Shutdown();

    private final Stall stall = new Stall();

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

    public Shutdown getShutdown() {
        return shutdown;
    }

    public Stall getStall() {
        return stall;
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

    /** Shutting down when the application context closes: the delay before the server stops accepting, then the schedulers. */
    public static class Shutdown {

        /** How long stopping waits for coroutines to finish; what is left goes on running on the JDK's default scheduler. */
        private Duration timeout = Duration.ofSeconds(30);

        /**
         * How long the instance goes on serving after its readiness turned to refusing traffic, before the web
         * server stops accepting: long enough for a load balancer to see it leave (its check interval times the
         * failed checks it needs, plus one interval). 0: the server stops accepting at once.
         */
        private Duration delay = Duration.ofSeconds(0);

        public Duration getTimeout() {
            return timeout;
        }

        public void setTimeout(Duration timeout) {
            this.timeout = Arguments.nonNegative("timeout", timeout);
        }

        public Duration getDelay() {
            return delay;
        }

        public void setDelay(Duration delay) {
            this.delay = Arguments.nonNegative("delay", delay);
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
         * The longest a stall may last and still count as the JVM warming up. Warm-up is told by cause, not by the
         * time since start: at the threshold the stuck code is loading or initialising classes, the JVM loaded ten
         * classes or more while it was watched, or the JIT compiled for a tenth of that time. Such a stall that ends within this limit is one INFO line without the
         * stack, counted in warmUpStalls (meter cosched.stalls.warmup) rather than stalls; one still stuck at the
         * limit is a stall, logged then with its stack. Its work moves at the threshold either way. 0: no stall is
         * warm-up.
         */
        // IOManager.DEFAULT_STALL_WARM_UP_LIMIT, written as a literal so that the configuration metadata shows it
        private Duration warmUpLimit = Duration.ofSeconds(1);

        public Duration getThreshold() {
            return threshold;
        }

        public Duration getWarmUpLimit() {
            return warmUpLimit;
        }

        public void setWarmUpLimit(Duration warmUpLimit) {
            this.warmUpLimit = Arguments.nonNegative("warmUpLimit", warmUpLimit);
        }

        /**
         * Removed: a stall no longer counts as warm-up for happening early, which hid a real hog in a fresh
         * instance. Setting it fails, naming what replaced it.
         */
        @Deprecated(forRemoval = true)
        public void setWarmUp(Duration warmUp) {
            throw new IllegalArgumentException("cosched.stall.warm-up=" + warmUp
                    + " is no longer read: a stall counts as warm-up by its cause (classes loading, the JIT "
                    + "compiling), not by the time since start; cosched.stall.warm-up-limit bounds how long such a "
                    + "stall may last (default 1s, 0: none is warm-up)");
        }

        public void setThreshold(Duration threshold) {
            this.threshold = Arguments.nonNegative("threshold", threshold);
        }
    }
}
