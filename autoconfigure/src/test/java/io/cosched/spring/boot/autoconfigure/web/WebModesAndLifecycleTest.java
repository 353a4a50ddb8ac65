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
}
