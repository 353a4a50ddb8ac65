package io.cosched.starter;

import static org.assertj.core.api.Assertions.assertThat;

import io.cosched.IOManager;
import io.cosched.SchedulerStats;
import io.cosched.Transport;
import io.cosched.spring.web.RunAsCoroutine;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.tracing.Span;
import io.micrometer.tracing.Tracer;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.slf4j.MDC;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * An application that adds only the starter (and OpenTelemetry tracing) and marks a handler: the
 * handler runs as a coroutine on the epoll loop that read the request, and sees the request's trace.
 */
@Timeout(120)
class StarterApplicationTest {

    @SpringBootApplication
    static class App {
        @RestController
        static class Handlers {
            private final Tracer tracer;
            private final ObservationRegistry observations;

            Handlers(Tracer tracer, ObservationRegistry observations) {
                this.tracer = tracer;
                this.observations = observations;
            }

            @RunAsCoroutine
            @GetMapping("/where")
            String where() {
                return Thread.currentThread().toString();
            }

            @RunAsCoroutine
            @GetMapping("/trace")
            String trace() {
                Span span = tracer.currentSpan();
                return (span == null ? "no-span" : span.context().traceId()) + " mdc=" + MDC.get("traceId");
            }

            /** What the handler sees of the request's observation, its span and the MDC. */
            @RunAsCoroutine
            @GetMapping("/observed")
            String observed() {
                Observation current = observations.getCurrentObservation();
                Span span = tracer.currentSpan();
                return (current == null ? "none" : current.getContext().getName()) + " span="
                        + (span == null ? "none" : span.context().spanId()) + " mdc=" + MDC.get("spanId");
            }
        }
    }

    private static ConfigurableApplicationContext context;
    private static String base;
    private final HttpClient http = HttpClient.newHttpClient();

    @BeforeAll
    static void start() {
        context = SpringApplication.run(
                App.class,
                "--server.port=0",
                "--spring.main.banner-mode=off",
                "--logging.level.root=warn",
                "--management.tracing.sampling.probability=1.0",
                "--management.opentelemetry.tracing.export.otlp.enabled=false",
                "--management.otlp.metrics.export.enabled=false",
                "--management.opentelemetry.logging.export.otlp.enabled=false");
        base = "http://127.0.0.1:" + context.getEnvironment().getProperty("local.server.port");
    }

    @AfterAll
    static void stop() {
        context.close();
    }

    @Test
    void aMarkedHandlerRunsAsACoroutineOnTheEpollLoopThatReadTheRequest() throws Exception {
        String body = http.send(
                        HttpRequest.newBuilder(URI.create(base + "/where")).build(),
                        HttpResponse.BodyHandlers.ofString())
                .body();
        assertThat(body).startsWith("VirtualThread[").matches(".*@cosched-io-\\d+$");
        IOManager io = context.getBean(IOManager.class);
        assertThat(io.transport()).isEqualTo(Transport.EPOLL);
        assertThat(io.stats().mode()).isEqualTo(SchedulerStats.Mode.CARRIER);
        assertThat(io.isCarrierMode()).isTrue();
    }

    @Test
    void theRequestsObservationAndSpanAreCurrentInsideTheHandlerAndNothingIsLeftOnTheLoop() throws Exception {
        MeterRegistry meters = context.getBean(MeterRegistry.class);
        long timed = requestsTimed(meters);
        String body = http.send(
                        HttpRequest.newBuilder(URI.create(base + "/observed")).build(),
                        HttpResponse.BodyHandlers.ofString())
                .body();
        String[] parts = body.split(" ");
        assertThat(parts[0]).as("the current observation in the handler").isEqualTo("http.server.requests");
        assertThat(parts[1]).as("its span").matches("span=[0-9a-f]{16}");
        assertThat(parts[2]).as("and the span in the MDC").isEqualTo("mdc=" + parts[1].substring("span=".length()));
        // the observation stopped with the response: http.server.requests counted it
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (requestsTimed(meters) == timed && System.nanoTime() - deadline < 0) {
            LockSupport.parkNanos(1_000_000);
        }
        assertThat(requestsTimed(meters)).isEqualTo(timed + 1);
        // the loops' own threads keep no observation, span or MDC of any request
        IOManager io = context.getBean(IOManager.class);
        ObservationRegistry observations = context.getBean(ObservationRegistry.class);
        Tracer tracer = context.getBean(Tracer.class);
        for (int i = 0; i < io.stats().threads(); i++) {
            CompletableFuture<String> onLoop = new CompletableFuture<>();
            io.eventLoop(i)
                    .execute(() -> onLoop.complete(observations.getCurrentObservation() + " " + tracer.currentSpan()
                            + " " + MDC.getCopyOfContextMap()));
            assertThat(onLoop.get(10, TimeUnit.SECONDS)).as("loop %d", i).matches("null null (null|\\{\\})");
        }
    }

    private static long requestsTimed(MeterRegistry meters) {
        return meters.find("http.server.requests").tag("uri", "/observed").timers().stream()
                .mapToLong(Timer::count)
                .sum();
    }

    @Test
    void theRequestsTraceIsCurrentInsideTheCoroutineAndInItsMdc() throws Exception {
        String traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
        HttpRequest request = HttpRequest.newBuilder(URI.create(base + "/trace"))
                .header("traceparent", "00-" + traceId + "-00f067aa0ba902b7-01")
                .build();
        String body = http.send(request, HttpResponse.BodyHandlers.ofString()).body();
        assertThat(body).isEqualTo(traceId + " mdc=" + traceId);
    }
}
