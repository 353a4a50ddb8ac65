package io.cosched.spring.boot.autoconfigure.web;

import io.cosched.spring.web.CoroutineHandlers;
import io.cosched.spring.web.RunAsCoroutine;
import io.micrometer.context.ContextRegistry;
import io.micrometer.context.integration.Slf4jThreadLocalAccessor;
import org.slf4j.MDC;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.SpringBootConfiguration;
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

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.springframework.web.reactive.function.server.RouterFunctions.route;
import static org.springframework.web.reactive.function.server.ServerResponse.ok;

/** A WebFlux application with blocking handlers, started on a random port by the web tests. */
@SpringBootConfiguration
@EnableAutoConfiguration
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

        static void reset() {
            carriers.clear();
            concurrent.set(0);
            maxConcurrent.set(0);
            interrupted = new CountDownLatch(1);
            release = new CountDownLatch(1);
        }
    }

    /** For running the test application by hand (e.g. under wrk). */
    public static void main(String[] args) {
        SpringApplication.run(WebTestApp.class, args);
    }

    static ConfigurableApplicationContext start(String... properties) {
        return startWith(List.of(properties));
    }

    /** Starts the app on a random port with two loops named test-io and the given extra properties. */
    public static ConfigurableApplicationContext startWith(List<String> properties) {
        List<String> args = new ArrayList<>(List.of("--server.port=0", "--spring.main.banner-mode=off",
                "--cosched.io.name=test-io", "--cosched.io.threads=2", "--logging.level.root=warn"));
        for (String p : properties) {
            args.add("--" + p);
        }
        return SpringApplication.run(WebTestApp.class, args.toArray(String[]::new));
    }

    static int port(ConfigurableApplicationContext context) {
        return Integer.parseInt(context.getEnvironment().getProperty("local.server.port", "-1"));
    }

    @Bean
    RouterFunction<ServerResponse> functionalRoutes(CoroutineHandlers coroutines) {
        return route()
                .GET("/fn/thread", coroutines.blocking(request -> ok().bodyValue(Thread.currentThread().toString())))
                .build()
                .and(route()
                        .GET("/fn/filtered", request -> ok().bodyValue(Thread.currentThread().toString()))
                        .filter(coroutines.filter())
                        .build());
    }

    @Bean
    WebFilter requestIdFilter() {
        return (exchange, chain) -> {
            String id = exchange.getRequest().getHeaders().getFirst("X-Request-Id");
            return id == null ? chain.filter(exchange)
                    : chain.filter(exchange).contextWrite(ctx -> ctx.put(Slf4jThreadLocalAccessor.KEY, Map.of("requestId", id)));
        };
    }

    /** Registered as a member class of this configuration. */
    @RestController
    static class Handlers {

        @RunAsCoroutine
        @GetMapping("/thread")
        String thread() {
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

        @RunAsCoroutine
        @GetMapping("/hold")
        String hold() throws InterruptedException {
            Probe.holding.countDown();
            if (!Probe.release.await(60, TimeUnit.SECONDS)) {
                throw new IllegalStateException("never released");
            }
            return "held";
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
