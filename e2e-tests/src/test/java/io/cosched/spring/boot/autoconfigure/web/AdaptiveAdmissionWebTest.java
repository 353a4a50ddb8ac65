package io.cosched.spring.boot.autoconfigure.web;

import static org.assertj.core.api.Assertions.assertThat;

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
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectMapper;

/**
 * cosched.web.admission.* against a real server: a handler that gets twenty times slower brings the adaptive limit
 * down to its floor; over it one request waits in the queue and the next is answered 429 with Retry-After before
 * WebFlux; the limit and the queue show in the endpoint and the meters.
 */
@Timeout(120)
class AdaptiveAdmissionWebTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    @RegisterExtension
    static final RunningApp app = new RunningApp(
            "management.endpoints.web.exposure.include=cosched,prometheus",
            "cosched.web.admission.limit=adaptive",
            "cosched.web.admission.min-limit=2",
            "cosched.web.max-in-flight=40",
            "cosched.web.admission.queue-size=1",
            "cosched.web.admission.queue-timeout=30s",
            "cosched.web.admission.status=429");

    private static CoschedWebStats stats() {
        return app.bean(CoschedWebStats.class);
    }

    @Test
    void aHandlerTwentyTimesSlowerBringsTheLimitToItsFloorAndTheRequestsOverItAreQueuedThenShed() throws Exception {
        assertThat(stats().limit())
                .as("an adaptive limit starts at its ceiling")
                .isEqualTo(40);
        for (int i = 0; i < 40; i++) { // the baseline: 5 ms requests
            assertThat(app.http().get("/sleep?ms=5").statusCode()).isEqualTo(200);
        }
        assertThat(stats().limit()).isEqualTo(40);
        // now 100 ms, eight at a time, until the limit has come down; some are shed on the way
        List<CompletableFuture<HttpResponse<String>>> slow = new ArrayList<>();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (stats().limit() > 2 && System.nanoTime() < deadline) {
            slow.removeIf(CompletableFuture::isDone);
            while (slow.size() < 8) {
                slow.add(app.http().getAsync("/sleep?ms=100"));
            }
            slow.get(0).get(30, TimeUnit.SECONDS);
        }
        assertThat(stats().limit()).as(stats().toString()).isEqualTo(2);
        for (CompletableFuture<HttpResponse<String>> r : slow) {
            assertThat(r.get(30, TimeUnit.SECONDS).statusCode()).isIn(200, 429);
        }
        app.awaitIdle();

        WebTestApp.Probe.holding = new CountDownLatch(2);
        CompletableFuture<HttpResponse<String>> first = app.http().getAsync("/hold");
        CompletableFuture<HttpResponse<String>> second = app.http().getAsync("/hold");
        assertThat(WebTestApp.Probe.holding.await(10, TimeUnit.SECONDS)).isTrue();
        CompletableFuture<HttpResponse<String>> queued = app.http().getAsync("/thread");
        Await.until(() -> stats().queued() == 1, () -> stats().toString());
        long shedEarly = stats().shedEarly();
        HttpResponse<String> shed = app.http().get("/thread");
        assertThat(shed.statusCode()).isEqualTo(429);
        assertThat(shed.headers().firstValue("Retry-After")).hasValue("1");
        assertThat(shed.body())
                .contains("\"status\":429", "too many requests in flight (cosched.web.admission.limit: adaptive)");
        assertThat(stats().shedEarly() - shedEarly)
                .as("answered before WebFlux")
                .isEqualTo(1);

        JsonNode web = JSON.readTree(app.http().get("/actuator/cosched").body()).get("web");
        assertThat(web.get("limit").asInt()).isEqualTo(2);
        assertThat(web.get("queued").asInt()).isEqualTo(1);
        assertThat(web.get("inFlight").asInt()).isEqualTo(2);
        String prometheus = app.http().get("/actuator/prometheus").body();
        assertThat(prometheus)
                .contains("cosched_web_admission_limit 2.0", "cosched_web_admission_queued 1.0")
                .contains("cosched_web_admission_queue_timeouts_total 0.0");

        WebTestApp.Probe.release.countDown();
        assertThat(first.get(30, TimeUnit.SECONDS).body()).isEqualTo("held");
        assertThat(second.get(30, TimeUnit.SECONDS).body()).isEqualTo("held");
        assertThat(queued.get(30, TimeUnit.SECONDS).statusCode())
                .as("the queued one got a slot")
                .isEqualTo(200);
        app.awaitIdle();
    }
}
