package io.cosched.demo;

import static org.assertj.core.api.Assertions.assertThat;

import io.cosched.IOManager;
import java.net.http.HttpResponse;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import tools.jackson.databind.JsonNode;

/** The quote endpoints (blocking and reactive), the retry and timeout paths, the burst, and actuator. */
@SpringBootTest(
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {"demo.quote.timeout=300ms", "demo.quote.backoff=10ms"})
@Timeout(120)
class QuoteApiTest {

    @LocalServerPort
    int port;

    @Autowired
    IOManager io;

    Api api;

    @BeforeEach
    void client() {
        api = new Api(port);
    }

    @AfterEach
    void healthyStub() throws Exception {
        stub(20, 0);
    }

    private void stub(long delayMs, int failNext) throws Exception {
        HttpResponse<String> r = api.post(
                "/downstream/settings",
                "{\"delayMs\":" + delayMs + ",\"failureRate\":0.0,\"failNext\":" + failNext + "}");
        assertThat(r.statusCode()).isEqualTo(200);
    }

    @Test
    void theBlockingQuoteRunsAsACoroutineOnAnEventLoop() throws Exception {
        JsonNode q = Api.json(api.get("/api/quote/sku-1"));
        assertThat(q.get("attempts").asInt()).isEqualTo(1);
        assertThat(q.get("style").asString()).isEqualTo("blocking");
        assertThat(q.get("servedBy").asString()).startsWith("VirtualThread[").contains("@cosched-io-");
        assertThat(q.get("priceCents").asLong()).isPositive();
    }

    @Test
    void theBlockingQuotesPricingCallsAreResumedByTheirOwnLoops() throws Exception {
        Api.json(api.get("/api/quote/sku-warm")); // the client's first connections
        long remote = io.stats().remoteWakeups();
        long local = io.stats().localWakeups();
        for (int i = 0; i < 10; i++) {
            assertThat(Api.json(api.get("/api/quote/sku-" + i)).get("attempts").asInt())
                    .isEqualTo(1);
        }
        assertThat(io.stats().localWakeups() - local).isGreaterThanOrEqualTo(10);
        assertThat(io.stats().remoteWakeups() - remote).isZero();
    }

    @Test
    void theReactiveQuoteGivesTheSamePriceOnTheSameLoops() throws Exception {
        JsonNode blocking = Api.json(api.get("/api/quote/sku-2"));
        JsonNode reactive = Api.json(api.get("/api/reactive/quote/sku-2"));
        assertThat(reactive.get("style").asString()).isEqualTo("reactive");
        assertThat(reactive.get("priceCents").asLong())
                .isEqualTo(blocking.get("priceCents").asLong());
        assertThat(reactive.get("servedBy").asString()).contains("cosched-io-");
    }

    @Test
    void aFlakyDownstreamIsRetriedWithBackOff() throws Exception {
        stub(5, 2);
        JsonNode q = Api.json(api.get("/api/quote/sku-3"));
        assertThat(q.get("attempts").asInt()).isEqualTo(3);
        stub(5, 2);
        assertThat(Api.json(api.get("/api/reactive/quote/sku-3"))
                        .get("attempts")
                        .asInt())
                .isEqualTo(3);
    }

    @Test
    void aDownstreamFailingEveryAttemptIs502() throws Exception {
        stub(5, 3);
        HttpResponse<String> r = api.get("/api/quote/sku-4");
        assertThat(r.statusCode()).isEqualTo(502);
        assertThat(Api.json(r).get("detail").asString())
                .startsWith("no price for 'sku-4' after 3 attempts: the pricing service failed");
    }

    @Test
    void aDownstreamSlowerThanTheTimeoutIs504() throws Exception {
        stub(2_000, 0);
        HttpResponse<String> blocking = api.get("/api/quote/sku-5");
        assertThat(blocking.statusCode()).isEqualTo(504);
        assertThat(Api.json(blocking).get("detail").asString()).contains("did not answer in time");
        HttpResponse<String> reactive = api.get("/api/reactive/quote/sku-5");
        assertThat(reactive.statusCode()).isEqualTo(504);
    }

    @Test
    void aBurstRunsInTheBackgroundAndReportsProgress() throws Exception {
        HttpResponse<String> started = api.post("/api/burst?requests=40&concurrency=8&path=/api/orders/1", null);
        assertThat(started.statusCode()).isEqualTo(202);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        JsonNode status;
        do {
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20)); // polling a state, not awaiting an outcome
            status = Api.json(api.get("/api/burst"));
        } while (status.get("running").asBoolean() && System.nanoTime() < deadline);
        assertThat(status.get("done").asInt()).isEqualTo(40);
        assertThat(status.get("ok").asInt()).isEqualTo(40);
        HttpResponse<String> bad = api.post("/api/burst?requests=0", null);
        assertThat(bad.statusCode()).isEqualTo(400);
        assertThat(Api.json(bad).get("detail").asString()).isEqualTo("requests: 0 (expected: 1..100000)");
    }

    @Test
    void actuatorShowsTheSchedulersAndTheirMeters() throws Exception {
        JsonNode cosched = Api.json(api.get("/actuator/cosched"));
        assertThat(cosched.get("schedulers").get("cosched-io").get("mode").asString())
                .isEqualTo("carrier");
        assertThat(api.get("/actuator/prometheus").body())
                .contains("cosched_scheduler_queue_depth{scheduler=\"cosched-io\"}");
        assertThat(Api.json(api.get("/actuator/health")).get("status").asString())
                .isEqualTo("UP");
        assertThat(api.get("/").body()).contains("cosched");
    }
}
