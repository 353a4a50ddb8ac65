package io.cosched.spring.boot.autoconfigure.web;

import static org.assertj.core.api.Assertions.assertThat;

import io.cosched.IOManager;
import io.cosched.spring.web.CoschedWebStats;
import java.net.http.HttpResponse;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/** cosched.web.request-timeout and cosched.web.max-in-flight against a real server. */
@Timeout(120)
class TimeoutAndSheddingWebTest {

    @RegisterExtension
    static final RunningApp app = new RunningApp("cosched.web.request-timeout=500ms", "cosched.web.max-in-flight=2");

    private static CoschedWebStats stats() {
        return app.bean(CoschedWebStats.class);
    }

    @Test
    void aHandlerPastTheTimeoutIsInterruptedAndTheRequestAnswered503() throws Exception {
        long timedOut = stats().timedOut();
        HttpResponse<String> r = app.http().get("/sleep?ms=60000");
        assertThat(r.statusCode()).isEqualTo(503);
        assertThat(r.headers().firstValue("Content-Type")).hasValue("application/problem+json");
        assertThat(r.body())
                .contains("\"status\":503")
                .contains("request timed out after PT0.5S (cosched.web.request-timeout)");
        assertThat(r.headers().firstValue("Retry-After")).isEmpty();
        assertThat(WebTestApp.Probe.interrupted.await(10, TimeUnit.SECONDS))
                .as("the coroutine was interrupted")
                .isTrue();
        assertThat(stats().timedOut() - timedOut).isEqualTo(1);
        awaitQuiet();
    }

    @Test
    void aHandlerThatWaitedForTheRequestBodyIsCoveredByTheTimeoutToo() throws Exception {
        HttpResponse<String> r = app.http().post("/echo-slow?ms=60000", "body");
        assertThat(r.statusCode()).isEqualTo(503);
        assertThat(WebTestApp.Probe.interrupted.await(10, TimeUnit.SECONDS)).isTrue();
        awaitQuiet();
    }

    @Test
    void aHandlerWithinTheTimeoutAnswersNormally() throws Exception {
        HttpResponse<String> r = app.http().get("/sleep?ms=20");
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.body()).isEqualTo("slept");
    }

    @Test
    void beyondMaxInFlightNewCoroutineRequestsGet503WithRetryAfterWhileTheOthersSucceed() throws Exception {
        long shed = stats().shed();
        WebTestApp.Probe.holding = new CountDownLatch(2);
        CompletableFuture<HttpResponse<String>> first = app.http().getAsync("/hold");
        CompletableFuture<HttpResponse<String>> second = app.http().getAsync("/hold");
        assertThat(WebTestApp.Probe.holding.await(10, TimeUnit.SECONDS))
                .as("two requests holding")
                .isTrue();
        assertThat(stats().inFlight()).isEqualTo(2);

        long shedEarly = stats().shedEarly();
        HttpResponse<String> third = app.http().get("/thread");
        assertThat(third.statusCode()).isEqualTo(503);
        assertThat(third.headers().firstValue("Retry-After")).hasValue("1");
        assertThat(third.headers().firstValue("Content-Type")).hasValue("application/problem+json");
        assertThat(third.body()).contains("too many requests in flight (cosched.web.max-in-flight: 2)");
        assertThat(stats().shed() - shed).isEqualTo(1);
        assertThat(stats().shedEarly() - shedEarly)
                .as("answered in the pipeline, before WebFlux")
                .isEqualTo(1);
        // a functional coroutine route too; one whose coroutine a filter starts cannot be told from its
        // route, so WebFlux sheds it
        assertThat(app.http().get("/fn/thread").statusCode()).isEqualTo(503);
        assertThat(stats().shedEarly() - shedEarly).isEqualTo(2);
        assertThat(app.http().get("/fn/filtered").statusCode()).isEqualTo(503);
        assertThat(stats().shed() - shed).isEqualTo(3);
        assertThat(stats().shedEarly() - shedEarly).isEqualTo(2);
        // a reactive handler needs no coroutine and is not shed
        assertThat(app.http().get("/reactive-thread").statusCode()).isEqualTo(200);
        // a POST with a body, then a request on the same connection: the body is dropped, the connection goes on
        assertThat(app.http()
                        .raw("POST /echo-slow?ms=1 HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n\r\nbody"
                                + "GET /reactive-thread HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"))
                .startsWith("HTTP/1.1 503 Service Unavailable")
                .contains("HTTP/1.1 200 OK");
        assertThat(stats().shedEarly() - shedEarly).isEqualTo(3);

        WebTestApp.Probe.release.countDown();
        assertThat(first.get(30, TimeUnit.SECONDS).body()).isEqualTo("held");
        assertThat(second.get(30, TimeUnit.SECONDS).body()).isEqualTo("held");
        awaitQuiet();
        assertThat(app.http().get("/thread").statusCode()).isEqualTo(200);
    }

    private static void awaitQuiet() throws Exception {
        IOManager io = app.bean(IOManager.class);
        Await.until(() -> stats().inFlight() == 0 && io.stats().coroutines() == 0, () -> stats() + " " + io.stats());
        assertThat(stats().inFlight()).isZero();
        assertThat(io.stats().coroutines()).isZero();
        assertThat(io.timers().pending()).as("timeout timers cancelled").isZero();
    }
}
