package io.cosched.spring.boot.autoconfigure.web;

import io.cosched.Coroutines;
import io.cosched.TaskScope;
import io.cosched.TaskScope.Joiner;
import io.cosched.TaskScope.Subtask;
import io.cosched.spring.web.RunAsCoroutine;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.stream.Collectors;
import org.slf4j.MDC;
import org.springframework.context.i18n.LocaleContextHolder;
import org.springframework.security.authentication.TestingAuthenticationToken;
import org.springframework.security.core.Authentication;
import org.springframework.security.core.context.SecurityContextHolder;
import org.springframework.security.core.context.SecurityContextImpl;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.client.RestClient;
import org.springframework.web.server.WebFilter;

/** Handlers that fan out inside a request with a {@link TaskScope}, for {@link FanOutWebTest}. */
@RestController
@RequestMapping("/fanout")
class FanOutHandlers {

    /** What the fan-out handlers did; reset by each test. */
    static final class Probe {
        static volatile String downstreamUri;
        static volatile CountDownLatch forksRunning = new CountDownLatch(3);
        static final List<Long> forkEndedAtNanos = new CopyOnWriteArrayList<>();
        static volatile long failedAtNanos;
        static volatile long cancelledAtNanos; // when Spring cancelled a /fanout request, seen by the filter

        static void reset() {
            forksRunning = new CountDownLatch(3);
            forkEndedAtNanos.clear();
            failedAtNanos = 0;
            cancelledAtNanos = 0;
        }
    }

    private final RestClient downstream;
    private final ObservationRegistry observations;

    FanOutHandlers(RestClient.Builder builder, ObservationRegistry observations) {
        this.downstream = builder.build();
        this.observations = observations;
    }

    /** Notes when Spring cancels a fan-out request (its client went away), before cosched interrupts its coroutine. */
    @org.springframework.context.annotation.Bean
    static WebFilter fanOutCancelWatch() {
        return (exchange, chain) -> exchange.getRequest().getPath().value().startsWith("/fanout/")
                ? chain.filter(exchange).doOnCancel(() -> Probe.cancelledAtNanos = System.nanoTime())
                : chain.filter(exchange);
    }

    /**
     * What a subtask on the owner's loop and one on the compute pool see of the owner's context: the MDC (the
     * request's {@code requestId}, carried by the Reactor context, and a key the handler put), the security
     * context, the locale, the current observation, and where they run.
     */
    @RunAsCoroutine
    @GetMapping("/context")
    String context() throws InterruptedException {
        MDC.put("orderId", "42");
        Authentication alice = new TestingAuthenticationToken("alice", "n/a", "ROLE_USER");
        SecurityContextHolder.getContextHolderStrategy().setContext(new SecurityContextImpl(alice));
        Observation request = observations.getCurrentObservation();
        String owner = "owner " + where() + " observation "
                + (request == null ? null : request.getContext().getName());
        try (TaskScope<String, java.util.stream.Stream<Subtask<String>>> scope =
                TaskScope.open(Joiner.allSuccessfulOrThrow(), c -> c.withName("context"))) {
            scope.fork(() -> seen("loop", request));
            scope.fork(() -> seen("compute", request), TaskScope.Placement.COMPUTE);
            return owner + "\n" + scope.join().map(Subtask::get).collect(Collectors.joining("\n"));
        } finally {
            MDC.remove("orderId");
        }
    }

    private String seen(String fork, Observation request) {
        Observation current = observations.getCurrentObservation();
        Authentication auth = SecurityContextHolder.getContext().getAuthentication();
        return fork + " " + where() + " requestId=" + MDC.get("requestId") + " orderId=" + MDC.get("orderId")
                + " user=" + (auth == null ? null : auth.getName()) + " locale=" + LocaleContextHolder.getLocale()
                + " observation="
                + (current == null ? null : current.getContext().getName())
                + " parent-is-request="
                + (current != null && request != null && current.getContext().getParentObservation() == request);
    }

    /** The thread's carrier for a coroutine in carrier mode (its loop), else its kind. */
    private static String where() {
        String t = Thread.currentThread().toString();
        int at = t.lastIndexOf('@');
        if (Thread.currentThread().isVirtual()) {
            return at >= 0 ? "on " + t.substring(at + 1) : "virtual";
        }
        return "platform " + Thread.currentThread().getName().replaceAll("-\\d+$", "");
    }

    /** {@code n} calls to the downstream stub at once; their answers in fork order. */
    @RunAsCoroutine
    @GetMapping("/calls")
    String calls(@RequestParam(defaultValue = "3") int n) throws InterruptedException {
        try (TaskScope<String, java.util.stream.Stream<Subtask<String>>> scope =
                TaskScope.open(Joiner.allSuccessfulOrThrow())) {
            for (int i = 0; i < n; i++) {
                scope.fork(() -> {
                    Probe.forksRunning.countDown();
                    try {
                        return downstream
                                .get()
                                .uri(Probe.downstreamUri)
                                .retrieve()
                                .body(String.class);
                    } finally {
                        Probe.forkEndedAtNanos.add(System.nanoTime());
                    }
                });
            }
            return scope.join().map(Subtask::get).collect(Collectors.joining(","));
        }
    }

    /**
     * A scope opened inside a fork: its subtask sleeps 10 s, far past the request timeout. The inner scope has no
     * timeout of its own; the request's deadline must end it all the same.
     */
    @RunAsCoroutine
    @GetMapping("/nested")
    String nested() throws InterruptedException {
        try (TaskScope<String, java.util.stream.Stream<Subtask<String>>> outer =
                TaskScope.open(Joiner.allSuccessfulOrThrow(), c -> c.withName("outer"))) {
            outer.fork(() -> {
                try (TaskScope<String, java.util.stream.Stream<Subtask<String>>> inner =
                        TaskScope.open(Joiner.allSuccessfulOrThrow(), c -> c.withName("inner"))) {
                    inner.fork(() -> {
                        Probe.forksRunning.countDown();
                        try {
                            Thread.sleep(10_000);
                            return "late";
                        } finally {
                            Probe.forkEndedAtNanos.add(System.nanoTime());
                        }
                    });
                    return inner.join().map(Subtask::get).collect(Collectors.joining());
                }
            });
            return outer.join().map(Subtask::get).collect(Collectors.joining());
        }
    }

    /**
     * A page with what came in time (docs/web.md, "A partial answer"): the price and the stock are needed, the
     * reviews are shown when they come within the page's 300 ms; late, the page goes without them.
     */
    @RunAsCoroutine
    @GetMapping("/partial")
    String partial(@RequestParam long reviewsMs) throws InterruptedException {
        try (TaskScope<Object, Void> scope =
                TaskScope.open(Joiner.awaitAll(), c -> c.withName("page").withTimeout(Duration.ofMillis(300)))) {
            Subtask<String> price = scope.fork(() -> answerAfter(10, "42"));
            Subtask<String> stock = scope.fork(() -> answerAfter(10, "7"));
            Subtask<String> reviews = scope.fork(() -> {
                try {
                    return answerAfter(reviewsMs, "5 stars");
                } finally {
                    Probe.forkEndedAtNanos.add(System.nanoTime());
                }
            });
            try {
                scope.join();
            } catch (TaskScope.TimeoutException late) {
                // the unfinished subtasks were cancelled and have ended; what finished in time is there to read
            }
            if (price.state() != Subtask.State.SUCCESS || stock.state() != Subtask.State.SUCCESS) {
                throw new IllegalStateException("no page without its price and stock");
            }
            return "price=" + price.get() + ",stock=" + stock.get() + ",reviews="
                    + (reviews.state() == Subtask.State.SUCCESS ? reviews.get() : "later");
        }
    }

    private static String answerAfter(long ms, String answer) throws InterruptedException {
        Coroutines.sleep(Duration.ofMillis(ms));
        return answer;
    }

    /** Two subtasks that would wait a minute, and one that fails after {@code ms}. */
    @RunAsCoroutine
    @GetMapping("/one-fails")
    String oneFails(@RequestParam(defaultValue = "100") long ms) throws InterruptedException {
        try (TaskScope<Object, Void> scope = TaskScope.open()) {
            for (int i = 0; i < 2; i++) {
                scope.fork(() -> {
                    try {
                        Coroutines.sleep(Duration.ofMinutes(1));
                        return "never";
                    } finally {
                        Probe.forkEndedAtNanos.add(System.nanoTime());
                    }
                });
            }
            scope.fork(() -> {
                Coroutines.sleep(Duration.ofMillis(ms));
                Probe.failedAtNanos = System.nanoTime();
                throw new IllegalStateException("stock service down");
            });
            scope.join();
            return "never";
        }
    }
}
