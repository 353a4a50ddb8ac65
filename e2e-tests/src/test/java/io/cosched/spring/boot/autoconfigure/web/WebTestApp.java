package io.cosched.spring.boot.autoconfigure.web;

import static org.springframework.web.reactive.function.server.RouterFunctions.route;
import static org.springframework.web.reactive.function.server.ServerResponse.ok;

import io.cosched.spring.web.CoroutineHandlers;
import io.cosched.spring.web.RunAsCoroutine;
import io.micrometer.context.ContextRegistry;
import io.micrometer.context.integration.Slf4jThreadLocalAccessor;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.MDC;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.reactive.function.server.RouterFunction;
import org.springframework.web.reactive.function.server.ServerResponse;
import org.springframework.web.server.WebFilter;
import reactor.core.publisher.Mono;

/** A WebFlux application with blocking handlers, started on a random port by the web tests. */
@SpringBootConfiguration
// the JDBC tests' JPA and Spring Data JDBC on the class path are no part of this application
@EnableAutoConfiguration(
        excludeName = {
            "org.springframework.boot.hibernate.autoconfigure.HibernateJpaAutoConfiguration",
            "org.springframework.boot.data.jpa.autoconfigure.DataJpaRepositoriesAutoConfiguration",
            "org.springframework.boot.data.jdbc.autoconfigure.DataJdbcRepositoriesAutoConfiguration"
        })
@org.springframework.context.annotation.Import({
    StreamingHandlers.class,
    FanOutHandlers.class,
    WebSocketHandlers.class,
    WebTestApp.Limited.class
})
@org.springframework.resilience.annotation.EnableResilientMethods
public class WebTestApp {

    static {
        // MDC key "requestId" travels in the Reactor context, as a tracing bridge's keys would
        ContextRegistry.getInstance().registerThreadLocalAccessor(new Slf4jThreadLocalAccessor("requestId"));
    }

    /** What the handlers saw; reset by each test. */
    static final class Probe {
        static volatile CountDownLatch together = new CountDownLatch(0);
        static final Set<String> carriers = ConcurrentHashMap.newKeySet();
        static final AtomicInteger concurrent = new AtomicInteger();
        static final AtomicInteger maxConcurrent = new AtomicInteger();
        static volatile CountDownLatch interrupted = new CountDownLatch(1);
        static volatile CountDownLatch release = new CountDownLatch(1);
        static volatile CountDownLatch holding = new CountDownLatch(0);
        static volatile String hogCarrier;
        static final java.util.concurrent.locks.ReentrantLock lock = new java.util.concurrent.locks.ReentrantLock();
        static volatile int ioPort;
        static volatile String committedOn;
        static volatile String downstreamUri;
        static volatile long interruptedAtNanos;
        static volatile CountDownLatch finished = new CountDownLatch(1);

        static void reset() {
            carriers.clear();
            concurrent.set(0);
            maxConcurrent.set(0);
            interrupted = new CountDownLatch(1);
            release = new CountDownLatch(1);
            committedOn = null;
            finished = new CountDownLatch(1);
        }
    }

    /** For running the test application by hand (e.g. under wrk). */
    public static void main(String[] args) {
        SpringApplication.run(WebTestApp.class, args);
    }

    static ConfigurableApplicationContext start(String... properties) {
        return startWith(List.of(properties));
    }

    /**
     * Starts the app on a random port with two loops named test-io and the given extra properties (which win).
     * The stall watchdog is off unless a test sets {@code cosched.stall.threshold}: in a cold JVM the first
     * requests can hold a loop past the 100 ms default (class loading, JIT), and the spill that follows
     * would move coroutines off the loops whose threads the tests assert.
     */
    public static ConfigurableApplicationContext startWith(List<String> properties) {
        Map<String, String> merged = new java.util.LinkedHashMap<>();
        for (String p : List.of(
                "server.port=0",
                "spring.main.banner-mode=off",
                "cosched.io.name=test-io",
                "cosched.io.threads=2",
                "logging.level.root=warn",
                "cosched.stall.threshold=0")) {
            merged.put(p.substring(0, p.indexOf('=')), p);
        }
        for (String p : properties) {
            merged.put(p.substring(0, p.indexOf('=')), p);
        }
        return SpringApplication.run(
                WebTestApp.class, merged.values().stream().map(p -> "--" + p).toArray(String[]::new));
    }

    static int port(ConfigurableApplicationContext context) {
        return Integer.parseInt(context.getEnvironment().getProperty("local.server.port", "-1"));
    }

    @Bean
    RouterFunction<ServerResponse> functionalRoutes(CoroutineHandlers coroutines) {
        return route().GET(
                        "/fn/thread",
                        coroutines.blocking(
                                request -> ok().bodyValue(Thread.currentThread().toString())))
                // streamed bodies of functional handlers, produced in the request's coroutine
                .GET(
                        "/fn/events",
                        coroutines.blocking(request -> ok().contentType(
                                        org.springframework.http.MediaType.TEXT_EVENT_STREAM)
                                .body(
                                        coroutines.events(request, events -> {
                                            events.send("first " + Thread.currentThread());
                                            events.send("second");
                                        }),
                                        String.class)))
                .GET(
                        "/fn/bytes",
                        coroutines.blocking(request -> ok().contentType(org.springframework.http.MediaType.TEXT_PLAIN)
                                .body(org.springframework.web.reactive.function.BodyInserters.fromDataBuffers(
                                        coroutines.bytes(
                                                request,
                                                out -> out.write(("bytes by " + Thread.currentThread())
                                                        .getBytes(java.nio.charset.StandardCharsets.UTF_8)))))))
                .build()
                .and(route().GET(
                                "/fn/filtered",
                                request -> ok().bodyValue(Thread.currentThread().toString()))
                        .filter(coroutines.filter())
                        .build());
    }

    /** A filter that gives up on a request after {@code X-Filter-Timeout-Ms}, as an application's own timeout would. */
    @Bean
    WebFilter filterTimeout() {
        return (exchange, chain) -> {
            String ms = exchange.getRequest().getHeaders().getFirst("X-Filter-Timeout-Ms");
            return ms == null
                    ? chain.filter(exchange)
                    : chain.filter(exchange).timeout(java.time.Duration.ofMillis(Long.parseLong(ms)));
        };
    }

    /**
     * With {@code X-Hop: elastic}, the rest of the chain goes on from Reactor's boundedElastic scheduler, as it
     * does after Spring Security's default password check: the request reaches cosched off its loop.
     */
    @Bean
    WebFilter hopFilter() {
        return (exchange, chain) ->
                "elastic".equals(exchange.getRequest().getHeaders().getFirst("X-Hop"))
                        ? Mono.defer(() -> chain.filter(exchange))
                                .subscribeOn(reactor.core.scheduler.Schedulers.boundedElastic())
                        : chain.filter(exchange);
    }

    @Bean
    WebFilter requestIdFilter() {
        return (exchange, chain) -> {
            String id = exchange.getRequest().getHeaders().getFirst("X-Request-Id");
            return id == null
                    ? chain.filter(exchange)
                    : chain.filter(exchange)
                            .contextWrite(ctx -> ctx.put(Slf4jThreadLocalAccessor.KEY, Map.of("requestId", id)));
        };
    }

    /** Spring Framework's own limit on a method, rejecting: one call at a time, the others refused at once. */
    static class Limited {

        @org.springframework.resilience.annotation.ConcurrencyLimit(
                limit = 1,
                policy = org.springframework.resilience.annotation.ConcurrencyLimit.ThrottlePolicy.REJECT)
        public String hold() throws InterruptedException {
            Probe.holding.countDown();
            if (!Probe.release.await(60, TimeUnit.SECONDS)) {
                throw new IllegalStateException("never released");
            }
            return "held";
        }
    }

    /** Registered as a member class of this configuration. */
    @RestController
    static class Handlers {

        private final org.springframework.web.client.RestClient downstream;
        private final Limited limited;

        Handlers(org.springframework.web.client.RestClient.Builder builder, Limited limited) {
            this.downstream = builder.build();
            this.limited = limited;
        }

        /** Holds {@link Limited}'s one slot until released; a second call meanwhile is refused. */
        @RunAsCoroutine
        @GetMapping("/limited")
        String limited() throws InterruptedException {
            return limited.hold();
        }

        /** A handler whose executor is full lets the refusal out. */
        @RunAsCoroutine
        @GetMapping("/executor-full")
        String executorFull() {
            throw new java.util.concurrent.RejectedExecutionException("pool \"reports\" is full: 8 of 8 busy");
        }

        /** Calls the test's server at {@link Probe#downstreamUri} with the RestClient from Spring Boot's builder. */
        @RunAsCoroutine
        @GetMapping("/downstream")
        String downstream() {
            String carrier = Thread.currentThread().toString();
            return downstream.get().uri(Probe.downstreamUri).retrieve().body(String.class) + " on "
                    + carrier.substring(carrier.lastIndexOf('@') + 1);
        }

        @RunAsCoroutine
        @GetMapping("/thread")
        String thread() {
            return Thread.currentThread().toString();
        }

        /** The handler's carrier, the thread of its connection's event loop, and the thread Spring wrote the response on. */
        @RunAsCoroutine
        @GetMapping("/where")
        String where(org.springframework.web.server.ServerWebExchange exchange) throws InterruptedException {
            Object connection = org.springframework.http.server.reactive.ServerHttpRequestDecorator.getNativeRequest(
                    exchange.getRequest());
            io.netty.channel.EventLoop loop =
                    ((reactor.netty.Connection) connection).channel().eventLoop();
            java.util.concurrent.CompletableFuture<String> loopThread = new java.util.concurrent.CompletableFuture<>();
            loop.execute(() -> loopThread.complete(Thread.currentThread().getName()));
            String carrier = Thread.currentThread().toString();
            return carrier.substring(carrier.lastIndexOf('@') + 1) + " " + io.cosched.Coroutines.await(loopThread);
        }

        /** Answers the handler's thread; the thread that commits the response is left in the probe. */
        @RunAsCoroutine
        @GetMapping("/committed-on")
        String committedOn(org.springframework.http.server.reactive.ServerHttpResponse response) {
            response.beforeCommit(() -> {
                Probe.committedOn = Thread.currentThread().toString();
                return Mono.empty();
            });
            return Thread.currentThread().toString();
        }

        @GetMapping("/plain-thread")
        String plainThread() {
            return Thread.currentThread().toString();
        }

        @GetMapping("/reactive-thread")
        Mono<String> reactiveThread() {
            return Mono.fromSupplier(() -> Thread.currentThread().getName());
        }

        /** Holds until every expected request is in here at the same time, then blocks 300 ms more. */
        @RunAsCoroutine
        @GetMapping("/together")
        String together() throws InterruptedException {
            String carrier = Thread.currentThread().toString();
            Probe.carriers.add(carrier.substring(carrier.lastIndexOf('@') + 1));
            Probe.maxConcurrent.accumulateAndGet(Probe.concurrent.incrementAndGet(), Math::max);
            try {
                Probe.together.countDown();
                if (!Probe.together.await(60, TimeUnit.SECONDS)) {
                    throw new IllegalStateException("not all requests were in flight at once");
                }
                Thread.sleep(300);
                return "ok";
            } finally {
                Probe.concurrent.decrementAndGet();
            }
        }

        @RunAsCoroutine
        @GetMapping("/sleep")
        String sleep(@RequestParam long ms) throws InterruptedException {
            try {
                Thread.sleep(ms);
                return "slept";
            } catch (InterruptedException e) {
                Probe.interrupted.countDown();
                throw e;
            }
        }

        /** The body arrives after the first hand-off: the handler runs in a second coroutine. */
        @RunAsCoroutine
        @PostMapping("/echo-slow")
        String echoSlow(@RequestBody String body, @RequestParam long ms) throws InterruptedException {
            try {
                Thread.sleep(ms);
                return body + "@" + Thread.currentThread();
            } catch (InterruptedException e) {
                Probe.interrupted.countDown();
                throw e;
            }
        }

        /** Sleeps {@code ms} unless interrupted, which it notes with the time; signals {@link Probe#holding} on entry. */
        @RunAsCoroutine
        @GetMapping("/park")
        String park(@RequestParam long ms) {
            Probe.holding.countDown();
            try {
                Thread.sleep(ms);
                Probe.finished.countDown();
                return "slept";
            } catch (InterruptedException e) {
                Probe.interruptedAtNanos = System.nanoTime();
                Probe.interrupted.countDown();
                return "interrupted";
            }
        }

        /** Runs {@code ms} whatever happens, interrupts included, counting how many run at once. */
        @RunAsCoroutine
        @GetMapping("/stubborn")
        String stubborn(@RequestParam long ms) {
            Probe.maxConcurrent.accumulateAndGet(Probe.concurrent.incrementAndGet(), Math::max);
            boolean interrupted = false;
            try {
                long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(ms);
                for (long left; (left = deadline - System.nanoTime()) > 0; ) {
                    java.util.concurrent.locks.LockSupport.parkNanos(left);
                    interrupted |= Thread.interrupted(); // noted and cleared, else parkNanos would return at once
                }
                return "done";
            } finally {
                if (interrupted) {
                    Thread.currentThread().interrupt();
                }
                Probe.concurrent.decrementAndGet();
            }
        }

        @RunAsCoroutine
        @GetMapping("/hold")
        String hold() throws InterruptedException {
            Probe.holding.countDown();
            if (!Probe.release.await(60, TimeUnit.SECONDS)) {
                throw new IllegalStateException("never released");
            }
            return "held";
        }

        /** Holds {@link Probe#lock} while it parks on a socket read from the test's server at {@link Probe#ioPort}. */
        @RunAsCoroutine
        @GetMapping("/lock-then-read")
        String lockThenRead() throws java.io.IOException {
            Probe.lock.lock();
            try (java.net.Socket s = new java.net.Socket(java.net.InetAddress.getLoopbackAddress(), Probe.ioPort)) {
                Probe.holding.countDown();
                int b = s.getInputStream().read();
                String carrier = Thread.currentThread().toString();
                return "read " + b + " on " + carrier.substring(carrier.lastIndexOf('@') + 1);
            } finally {
                Probe.lock.unlock();
            }
        }

        /** Reactive, so it runs on the loop thread itself, which blocks on {@link Probe#lock}. */
        @GetMapping("/lock-on-loop")
        Mono<String> lockOnLoop() {
            return Mono.fromSupplier(() -> {
                Probe.lock.lock();
                try {
                    return "locked on " + Thread.currentThread().getName();
                } finally {
                    Probe.lock.unlock();
                }
            });
        }

        /**
         * A CPU hog: spins on its loop, never parking, until released (30 s at most). With {@code on},
         * only on that loop: elsewhere it answers at once.
         */
        @RunAsCoroutine
        @GetMapping("/hog")
        String hog(@RequestParam(required = false) String on) {
            String thread = Thread.currentThread().toString();
            String carrier = thread.substring(thread.lastIndexOf('@') + 1);
            if (on != null && !on.equals(carrier)) {
                return "elsewhere " + carrier;
            }
            Probe.hogCarrier = carrier;
            Probe.holding.countDown();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (Probe.release.getCount() > 0 && System.nanoTime() - deadline < 0) {
                Thread.onSpinWait();
            }
            return "hogged " + Probe.hogCarrier;
        }

        @RunAsCoroutine
        @GetMapping("/fail")
        String fail() {
            throw new IllegalStateException("handler failed on purpose");
        }

        @RunAsCoroutine
        @GetMapping("/mdc")
        String mdc() {
            return String.valueOf(MDC.get("requestId"));
        }
    }
}
