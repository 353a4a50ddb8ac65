package io.cosched.spring.boot.autoconfigure.web;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cosched.IOManager;
import io.cosched.spring.web.CoschedWebStats;
import java.net.http.HttpResponse;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.http.client.ReactorResourceFactory;

/** One application per case: cosched.web.mode, Spring Boot's virtual threads, graceful shutdown. */
@Timeout(120)
class WebModesAndLifecycleTest {

    @Test
    void inAllModeEveryBlockingHandlerRunsAsACoroutine() throws Exception {
        try (ConfigurableApplicationContext context = WebTestApp.start("cosched.web.mode=all")) {
            Http http = new Http(WebTestApp.port(context));
            assertThat(http.get("/plain-thread").body())
                    .startsWith("VirtualThread[")
                    .matches(".*@test-io-[01]$");
            assertThat(http.get("/reactive-thread").body())
                    .as("reactive handlers stay on the loop")
                    .matches("test-io-[01]");
        }
    }

    @Test
    void inOffModeNoHandlerRunsAsACoroutineButTheServerStillRunsOnTheLoops() throws Exception {
        try (ConfigurableApplicationContext context = WebTestApp.start("cosched.web.mode=off")) {
            Http http = new Http(WebTestApp.port(context));
            assertThat(http.get("/thread").body()).startsWith("Thread[").contains("test-io-");
            assertThat(http.get("/reactive-thread").body()).matches("test-io-[01]");
            assertThat(context.getBeansOfType(CoschedWebStats.class)).isEmpty();
            // the functional helper still works, off the loops
            assertThat(http.get("/fn/thread").body()).contains("boundedElastic");
            // streamed answers too, their producers detached from the request: coroutines of the IOManager
            assertThat(http.get("/s/download").body()).startsWith("report by VirtualThread[");
            assertThat(http.get("/fn/events").body())
                    .startsWith("data:first VirtualThread[")
                    .endsWith("data:second\n\n");
            // a body stream read on the connection's own loop would wait for itself: refused, with the fix named
            assertThat(http.post("/s/count-body", "abc").statusCode()).isEqualTo(500);
        }
    }

    @Test
    void coschedWinsOverSpringBootsVirtualThreadExecutor() throws Exception {
        try (ConfigurableApplicationContext context = WebTestApp.start("spring.threads.virtual.enabled=true")) {
            Http http = new Http(WebTestApp.port(context));
            // Boot's executor would run it on the JDK's ForkJoinPool: "...@ForkJoinPool-1-worker-1"
            assertThat(http.get("/thread").body()).startsWith("VirtualThread[").matches(".*@test-io-[01]$");
            // an unannotated handler is left to Spring: with virtual threads enabled Boot's executor does not
            // apply, because cosched's predicate selects only @RunAsCoroutine handlers
            assertThat(http.get("/plain-thread").body()).startsWith("Thread[");
        }
    }

    @Test
    void withoutVirtualThreadsTheAnnotatedHandlerIsACoroutineToo() throws Exception {
        try (ConfigurableApplicationContext context = WebTestApp.start("spring.threads.virtual.enabled=false")) {
            assertThat(new Http(WebTestApp.port(context)).get("/thread").body())
                    .matches("VirtualThread\\[.*@test-io-[01]$");
        }
    }

    @Test
    void theApplicationsOwnReactorResourceFactoryWins() throws Exception {
        try (ConfigurableApplicationContext context = WebTestApp.start("cosched.web.mode=annotated")) {
            assertThat(context.getBean(ReactorResourceFactory.class).getLoopResources())
                    .hasToString("IOManagerLoopResources[test-io]");
        }
    }

    @Test
    void closingTheContextLetsInFlightRequestsFinishOnLiveLoopsThenStopsTheIOManager() throws Exception {
        ConfigurableApplicationContext context = WebTestApp.start("server.shutdown=graceful");
        Http http = new Http(WebTestApp.port(context));
        IOManager io = context.getBean(IOManager.class);
        WebTestApp.Probe.reset();
        CompletableFuture<HttpResponse<String>> inFlight = http.getAsync("/sleep?ms=1500");
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (io.stats().sleeping() + io.stats().waiting() == 0 && System.nanoTime() < deadline) {
            Thread.onSpinWait();
        }
        Thread closer = Thread.ofPlatform().start(context::close);
        HttpResponse<String> r = inFlight.get(30, TimeUnit.SECONDS);
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.body()).isEqualTo("slept");
        closer.join();
        assertThatThrownBy(() -> io.spawn(() -> 1)).hasMessageContaining("is STOPPED");
    }

    /**
     * cosched.shutdown.delay: from the close on, readiness answers 503 while the server goes on accepting and
     * answering new connections for the delay; only then does it stop accepting.
     */
    @Test
    void aShutdownDelayServesOnWithReadinessRefusingBeforeTheServerStopsAccepting() throws Exception {
        ConfigurableApplicationContext context = WebTestApp.start(
                "cosched.shutdown.delay=4s",
                "management.endpoint.health.probes.enabled=true",
                "management.endpoints.web.exposure.include=health");
        int port = WebTestApp.port(context);
        Http http = new Http(port);
        String readiness = "GET /actuator/health/readiness HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
        assertThat(http.raw(readiness)).startsWith("HTTP/1.1 200 ");

        long closing = System.nanoTime();
        CompletableFuture<Void> closed = CompletableFuture.runAsync(
                context::close, r -> Thread.ofPlatform().name("closer").start(r));
        Await.until(() -> http.raw(readiness).startsWith("HTTP/1.1 503 "), () -> "readiness never refused");
        String served = http.raw("GET /thread HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
        assertThat(served).as("a new connection during the delay").startsWith("HTTP/1.1 200 ");
        assertThat(closed).as("the close waits out the delay").isNotDone();

        closed.get(60, TimeUnit.SECONDS);
        assertThat(System.nanoTime() - closing).isGreaterThanOrEqualTo(TimeUnit.SECONDS.toNanos(4));
        assertThatThrownBy(() -> new java.net.Socket(java.net.InetAddress.getLoopbackAddress(), port).close())
                .as("after the delay and the drain the listener is closed")
                .isInstanceOf(java.net.ConnectException.class);
    }

    /** cosched.web.request-timeout-status=504: a timed-out request is told from a shed one, which stays 503. */
    @Test
    void withTimeoutStatus504ATimedOutRequestIs504AndAShedOneStays503() throws Exception {
        try (ConfigurableApplicationContext context = WebTestApp.start(
                "cosched.web.request-timeout=2s",
                "cosched.web.request-timeout-status=504",
                "cosched.web.retry-after-max=2s",
                "cosched.web.max-in-flight=1")) {
            Http http = new Http(WebTestApp.port(context));
            WebTestApp.Probe.reset();
            HttpResponse<String> timedOut = http.get("/sleep?ms=60000");
            assertThat(timedOut.statusCode()).isEqualTo(504);
            assertThat(timedOut.headers().firstValue("Retry-After")).isEmpty();
            assertThat(timedOut.body())
                    .contains("\"title\":\"Gateway Timeout\",\"status\":504")
                    .contains("request timed out after PT2S (cosched.web.request-timeout)");
            assertThat(WebTestApp.Probe.interrupted.await(10, TimeUnit.SECONDS)).isTrue();
            Await.until(
                    () -> context.getBean(CoschedWebStats.class).inFlight() == 0,
                    () -> "the timed-out request still holds its slot");

            WebTestApp.Probe.holding = new java.util.concurrent.CountDownLatch(1);
            CompletableFuture<HttpResponse<String>> holding = http.getAsync("/hold");
            assertThat(WebTestApp.Probe.holding.await(10, TimeUnit.SECONDS)).isTrue();
            // shed while the one slot is held (for up to the 2 s timeout): in the pipeline, and in WebFlux
            for (String path : java.util.List.of("/thread", "/fn/filtered")) {
                HttpResponse<String> shed = http.get(path);
                assertThat(shed.statusCode()).as(path).isEqualTo(503);
                assertThat(shed.headers().firstValue("Retry-After"))
                        .as(path)
                        .get()
                        .isIn("1", "2");
                assertThat(shed.body()).as(path).contains("\"status\":503");
            }
            WebTestApp.Probe.release.countDown();
            assertThat(holding.get(30, TimeUnit.SECONDS).statusCode()).isIn(200, 504);
        }
    }
}
