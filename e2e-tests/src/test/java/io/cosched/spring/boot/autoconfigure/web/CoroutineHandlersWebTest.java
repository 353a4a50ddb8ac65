package io.cosched.spring.boot.autoconfigure.web;

import static org.assertj.core.api.Assertions.assertThat;

import io.cosched.IOManager;
import io.cosched.spring.web.CoschedWebStats;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/** A real server on a random port, cosched's defaults (annotated mode), two event loops. */
@Timeout(120)
class CoroutineHandlersWebTest {

    @RegisterExtension
    static final RunningApp app = new RunningApp();

    @Test
    void anAnnotatedHandlerRunsOnAVirtualThreadWhoseCarrierIsAnEpollEventLoopOfTheIOManager() throws Exception {
        HttpResponse<String> r = app.http().get("/thread");
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.body()).startsWith("VirtualThread[").matches(".*@test-io-[01]$");
        assertThat(app.bean(IOManager.class).transport()).isEqualTo(io.cosched.Transport.EPOLL);
    }

    @Test
    void theResponseOfACoroutineHandlerIsWrittenByItsLoopNotByTheCoroutine() throws Exception {
        HttpResponse<String> r = app.http().get("/committed-on");
        assertThat(r.statusCode()).isEqualTo(200);
        String carrier = r.body().replaceAll(".*@", "");
        assertThat(r.body()).startsWith("VirtualThread[").matches(".*@test-io-[01]$");
        // the loop thread itself, the handler's carrier: no write went through the loop's task queue
        assertThat(WebTestApp.Probe.committedOn).startsWith("Thread[").contains(carrier + ",");
    }

    @Test
    void aRequestThatReachesCoschedOnAnotherThreadRunsOnItsConnectionsLoopAndIsAnsweredThere() throws Exception {
        CoschedWebStats stats = app.bean(CoschedWebStats.class);
        long offLoop = stats.offLoop();
        List<CompletableFuture<HttpResponse<String>>> responses = new ArrayList<>();
        for (int i = 0; i < 8; i++) { // new connections go to both loops in turn
            responses.add(app.http().getOnNewConnection("/where", "X-Hop", "elastic"));
        }
        java.util.Set<String> loops = new java.util.HashSet<>();
        for (CompletableFuture<HttpResponse<String>> f : responses) {
            HttpResponse<String> r = f.get(30, TimeUnit.SECONDS);
            assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
            String[] carrierAndLoop = r.body().split(" ");
            assertThat(carrierAndLoop[0])
                    .as("the handler's carrier is its connection's loop")
                    .isEqualTo(carrierAndLoop[1]);
            loops.add(carrierAndLoop[1]);
        }
        assertThat(loops).as("connections on both loops").containsExactlyInAnyOrder("test-io-0", "test-io-1");
        assertThat(stats.offLoop() - offLoop)
                .as("each came from boundedElastic")
                .isEqualTo(8);
    }

    @Test
    void aRequestThatReachesCoschedOnItsLoopIsNotCountedAsOffLoop() throws Exception {
        CoschedWebStats stats = app.bean(CoschedWebStats.class);
        long offLoop = stats.offLoop();
        HttpResponse<String> r = app.http().get("/where");
        String[] carrierAndLoop = r.body().split(" ");
        assertThat(carrierAndLoop[0]).isEqualTo(carrierAndLoop[1]);
        assertThat(stats.offLoop()).isEqualTo(offLoop);
    }

    @Test
    void theServerItselfRunsOnTheIOManagersLoops() throws Exception {
        assertThat(app.http().get("/reactive-thread").body()).matches("test-io-[01]");
    }

    @Test
    void anUnannotatedBlockingHandlerStaysOnTheLoopInAnnotatedMode() throws Exception {
        assertThat(app.http().get("/plain-thread").body()).startsWith("Thread[").contains("test-io-");
    }

    @Test
    void fourHundredBlockingRequestsAreAllInFlightAtOnceOnTwoLoops() throws Exception {
        int n = 400;
        WebTestApp.Probe.together = new CountDownLatch(n);
        List<CompletableFuture<HttpResponse<String>>> responses = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            responses.add(app.http().getAsync("/together"));
        }
        for (CompletableFuture<HttpResponse<String>> f : responses) {
            HttpResponse<String> r = f.get(90, TimeUnit.SECONDS);
            assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        }
        // every handler waited until all 400 had arrived: they were in flight together, on two loops
        assertThat(WebTestApp.Probe.maxConcurrent.get()).isEqualTo(n);
        assertThat(WebTestApp.Probe.carriers).isSubsetOf("test-io-0", "test-io-1");
    }

    @Test
    void aFailingHandlerGivesTheNormalErrorResponseAndLeavesNoLiveCoroutine() throws Exception {
        HttpResponse<String> r = app.http().get("/fail");
        assertThat(r.statusCode()).isEqualTo(500);
        assertThat(r.body()).contains("\"status\":500").contains("/fail");
        IOManager io = app.bean(IOManager.class);
        Await.until(() -> io.stats().coroutines() == 0, () -> io.stats().toString());
        // the slot is given back when the loop has written the response, just after the client may see it
        CoschedWebStats stats = app.bean(CoschedWebStats.class);
        Await.until(() -> stats.inFlight() == 0, () -> "in flight: " + stats.inFlight());
    }

    @Test
    void mdcValuesOfTheRequestAreVisibleInsideTheCoroutineAndGoneAfterIt() throws Exception {
        assertThat(app.http().get("/mdc", "X-Request-Id", "req-42").body()).isEqualTo("req-42");
        assertThat(app.http().get("/mdc", "X-Request-Id", "req-43").body()).isEqualTo("req-43");
        assertThat(app.http().get("/mdc").body()).isEqualTo("null");
    }

    @Test
    void functionalEndpointsRunAsCoroutinesThroughTheHelperAndTheFilter() throws Exception {
        assertThat(app.http().get("/fn/thread").body())
                .startsWith("VirtualThread[")
                .matches(".*@test-io-[01]$");
        assertThat(app.http().get("/fn/filtered").body())
                .startsWith("VirtualThread[")
                .matches(".*@test-io-[01]$");
    }

    @Test
    void aRequestWithABodyRunsItsHandlerInACoroutineToo() throws Exception {
        HttpResponse<String> r = app.http().post("/echo-slow?ms=1", "payload");
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.body()).startsWith("payload@VirtualThread[").matches(".*@test-io-[01]$");
    }

    @Test
    void aRequestCostsOneCoroutineWithOrWithoutABodyAndSpringsHandOffsRunInlineInIt() throws Exception {
        CoschedWebStats stats = app.bean(CoschedWebStats.class);
        long coroutines = stats.coroutinesStarted();
        long inlined = stats.inlined();
        for (int i = 0; i < 10; i++) {
            assertThat(app.http().get("/thread").statusCode()).isEqualTo(200);
            assertThat(app.http().post("/echo-slow?ms=0", "b" + i).body()).startsWith("b" + i + "@VirtualThread[");
        }
        assertThat(stats.coroutinesStarted() - coroutines).isEqualTo(20);
        // Spring hands off twice per request (around the handling, before the invocation): both inline
        assertThat(stats.inlined() - inlined).isEqualTo(40);
    }
}
