package io.cosched.spring.boot.autoconfigure.web;

import static org.assertj.core.api.Assertions.assertThat;

import io.cosched.CarrierStats;
import io.cosched.Coroutine;
import io.cosched.PoolScheduler;
import io.cosched.SchedulerStats;
import java.lang.reflect.RecordComponent;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.context.ConfigurableApplicationContext;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectMapper;

/** /actuator/cosched, the meters and the health contributor against a running app with real load. */
@Timeout(120)
class MonitoringWebTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    @RegisterExtension
    static final RunningApp app = new RunningApp(
            "management.endpoints.web.exposure.include=health,metrics,prometheus,cosched",
            // no stall threshold (WebTestApp's default): a busy carrier must keep its queue so that the test can see it
            "management.endpoint.health.show-details=always",
            "cosched.scheduler.threads=2",
            "cosched.web.request-timeout=300ms",
            "cosched.web.max-in-flight=2");

    private static JsonNode json(String path) throws Exception {
        HttpResponse<String> r = app.http().get(path);
        assertThat(r.statusCode()).as(path + " -> " + r.body()).isEqualTo(200);
        return JSON.readTree(r.body());
    }

    @Test
    void aQuietSchedulerShowsEveryCarrierIdleAndNothingQueued() throws Exception {
        awaitQuiet();
        JsonNode all = json("/actuator/cosched");
        assertThat(all.get("schedulers").propertyNames()).containsExactlyInAnyOrder("test-io", "cosched");
        JsonNode io = all.get("schedulers").get("test-io");
        assertThat(io.get("type").asString()).isEqualTo("io");
        assertThat(io.get("transport").asString()).isEqualTo("epoll");
        assertThat(io.get("state").asString()).isEqualTo("RUNNING");
        assertThat(io.get("threads").asInt()).isEqualTo(2);
        JsonNode pool = all.get("schedulers").get("cosched");
        assertThat(pool.get("type").asString()).isEqualTo("pool");
        assertThat(pool.get("idleThreads").asInt()).isEqualTo(2);
        assertThat(pool.get("activeThreads").asInt()).isZero();
        assertThat(pool.get("queueDepth").asLong()).isZero();
        assertThat(pool.get("coroutines").asLong()).isZero();
        assertThat(pool.get("stalls").asLong()).isZero();
        assertThat(pool.get("starvations").asLong()).isZero();
        assertThat(pool.get("carriers")).hasSize(2);
        for (JsonNode c : pool.get("carriers")) {
            assertThat(c.get("state").asString()).isEqualTo("idle");
            assertThat(c.get("queueDepth").asLong()).isZero();
        }
        assertThat(pool.get("carriers").get(1).get("thread").asString()).isEqualTo("cosched-1");
        assertThat(all.get("web").get("inFlight").asInt()).isZero();

        assertThat(json("/actuator/cosched/cosched")).isEqualTo(pool);

        // the actuator's own JSON mapper writes the stats records in place: a component is a key, the name aside
        List<String> components = new ArrayList<>(List.of("transport", "carriers"));
        for (RecordComponent c : SchedulerStats.class.getRecordComponents()) {
            components.add(c.getName());
        }
        components.remove("name");
        assertThat(io.propertyNames()).containsExactlyInAnyOrderElementsOf(components);
        List<String> carrier = new ArrayList<>();
        for (RecordComponent c : CarrierStats.class.getRecordComponents()) {
            carrier.add(c.getName());
        }
        assertThat(io.get("carriers").get(0).propertyNames()).containsExactlyInAnyOrderElementsOf(carrier);
    }

    @Test
    void aBusySchedulerShowsItsQueueAndFewerIdleThreads() throws Exception {
        PoolScheduler pool = app.bean(PoolScheduler.class);
        AtomicBoolean release = new AtomicBoolean();
        CountDownLatch spinning = new CountDownLatch(1);
        Coroutine<Integer> busy = pool.spawnOn(0, () -> {
            spinning.countDown();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (!release.get() && System.nanoTime() - deadline < 0) {
                Thread.onSpinWait();
            }
            return 0;
        });
        try {
            assertThat(spinning.await(10, TimeUnit.SECONDS)).isTrue();
            List<Coroutine<Integer>> queued = new ArrayList<>();
            for (int i = 0; i < 5; i++) {
                queued.add(pool.spawnOn(0, () -> 1));
            }
            JsonNode s = json("/actuator/cosched/cosched");
            assertThat(s.get("queueDepth").asLong()).isEqualTo(5);
            assertThat(s.get("ready").asLong()).isEqualTo(5);
            assertThat(s.get("running").asLong()).isEqualTo(1);
            assertThat(s.get("activeThreads").asInt()).isEqualTo(1);
            assertThat(s.get("idleThreads").asInt()).isEqualTo(1);
            JsonNode carrier0 = s.get("carriers").get(0);
            assertThat(carrier0.get("state").asString()).isEqualTo("busy");
            assertThat(carrier0.get("queueDepth").asLong()).isEqualTo(5);
            assertThat(carrier0.get("coroutines").asInt()).isEqualTo(6);

            String prometheus = app.http().get("/actuator/prometheus").body();
            assertThat(prometheus)
                    .contains("cosched_scheduler_queue_depth{scheduler=\"cosched\"} 5.0")
                    .contains("cosched_scheduler_threads_idle{scheduler=\"cosched\"} 1.0")
                    .contains("cosched_coroutines{scheduler=\"cosched\",state=\"ready\"} 5.0");

            release.set(true);
            busy.join();
            for (Coroutine<Integer> c : queued) {
                c.join();
            }
        } finally {
            release.set(true);
        }
        awaitQuiet();
        assertThat(json("/actuator/cosched/cosched").get("queueDepth").asLong()).isZero();
    }

    @Test
    void anUnknownSchedulerIs404AndTheDumpIsOffByDefault() throws Exception {
        assertThat(app.http().get("/actuator/cosched/no-such-scheduler").statusCode())
                .isEqualTo(404);
        assertThat(app.http().get("/actuator/cosched/test-io/dump").statusCode())
                .isEqualTo(404);
    }

    @Test
    void metersArePublishedAndMoveWithTheLoad() throws Exception {
        double before = metric("cosched.tasks.completed", "scheduler:test-io");
        for (int i = 0; i < 10; i++) {
            assertThat(app.http().get("/thread").statusCode()).isEqualTo(200);
        }
        awaitQuiet();
        assertThat(metric("cosched.tasks.completed", "scheduler:test-io") - before)
                .isGreaterThanOrEqualTo(10);
        assertThat(metric("cosched.scheduler.threads.idle", "scheduler:test-io"))
                .isEqualTo(2);
        assertThat(metric("cosched.coroutines", "scheduler:test-io")).isZero();
        assertThat(metric("cosched.timers.pending", "scheduler:test-io")).isZero();
        assertThat(metric("cosched.stalls", "scheduler:test-io")).isZero();
        assertThat(json("/actuator/metrics/cosched.coroutines")
                        .get("availableTags")
                        .toString())
                .contains("ready", "running", "waiting", "sleeping");
        String prometheus = app.http().get("/actuator/prometheus").body();
        assertThat(prometheus)
                .contains(
                        "cosched_tasks_completed_total{scheduler=\"test-io\"}",
                        "cosched_scheduler_threads_active{scheduler=\"test-io\"}",
                        "cosched_stalls_total{scheduler=\"cosched\"} 0.0",
                        "cosched_starvations_total{scheduler=\"test-io\"}",
                        "cosched_web_in_flight",
                        "cosched_web_timeouts_total",
                        "cosched_web_shed_total",
                        "cosched_web_cancelled_total");
    }

    @Test
    void theServersConnectionsAreCountedAndItsListenQueueShown() throws Exception {
        JsonNode before = json("/actuator/cosched").get("server");
        try (java.net.Socket a =
                        new java.net.Socket(java.net.InetAddress.getLoopbackAddress(), WebTestApp.port(app.context()));
                java.net.Socket b = new java.net.Socket(
                        java.net.InetAddress.getLoopbackAddress(), WebTestApp.port(app.context()))) {
            Await.until(
                    () -> json("/actuator/cosched")
                                    .get("server")
                                    .get("accepted")
                                    .asLong()
                            >= before.get("accepted").asLong() + 2,
                    () -> "two new connections not counted");
            JsonNode server = json("/actuator/cosched").get("server");
            assertThat(server.get("open").asInt()).isGreaterThanOrEqualTo(3); // two idle ones and this request's
            if (java.nio.file.Files.isReadable(java.nio.file.Path.of("/proc/net/tcp"))) {
                assertThat(server.get("listenQueue").asLong())
                        .as("an idle server accepts at once")
                        .isZero();
                assertThat(server.get("listenOverflows").asLong()).isGreaterThanOrEqualTo(0);
            }
        }
        Await.until(
                () -> json("/actuator/cosched").get("server").get("open").asInt()
                        <= before.get("open").asInt(),
                () -> "closed connections still counted open");
        String prometheus = app.http().get("/actuator/prometheus").body();
        assertThat(prometheus)
                .contains(
                        "cosched_server_connections_accepted_total",
                        "cosched_server_connections_open",
                        "cosched_server_listen_queue");
    }

    @Test
    void webCountersFollowTimeoutsAndShedding() throws Exception {
        JsonNode web0 = json("/actuator/cosched").get("web");
        assertThat(app.http().get("/sleep?ms=60000").statusCode()).isEqualTo(503);
        assertThat(WebTestApp.Probe.interrupted.await(10, TimeUnit.SECONDS)).isTrue();
        awaitQuiet();

        WebTestApp.Probe.holding = new CountDownLatch(2);
        CompletableFuture<HttpResponse<String>> first = app.http().getAsync("/hold");
        CompletableFuture<HttpResponse<String>> second = app.http().getAsync("/hold");
        try {
            assertThat(WebTestApp.Probe.holding.await(10, TimeUnit.SECONDS)).isTrue();
            assertThat(app.http().get("/thread").statusCode()).isEqualTo(503);
            // both handlers counted down before they park: wait until they have
            Await.until(
                    () -> json("/actuator/cosched")
                                    .get("schedulers")
                                    .get("test-io")
                                    .get("waiting")
                                    .asLong()
                            == 2,
                    () -> "not both parked yet");
            JsonNode all = json("/actuator/cosched");
            JsonNode web = all.get("web");
            assertThat(web.get("inFlight").asInt()).isEqualTo(2);
            assertThat(web.get("timedOut").asLong() - web0.get("timedOut").asLong())
                    .isEqualTo(1);
            assertThat(web.get("shed").asLong() - web0.get("shed").asLong()).isEqualTo(1);
            assertThat(all.get("schedulers").get("test-io").get("waiting").asLong())
                    .isEqualTo(2);
            assertThat(metric("cosched.web.in.flight", null)).isEqualTo(2);
            assertThat(metric("cosched.web.shed", null))
                    .isEqualTo(web.get("shed").asDouble());
            assertThat(metric("cosched.web.timeouts", null))
                    .isEqualTo(web.get("timedOut").asDouble());
            assertThat(metric("cosched.web.cancelled", null))
                    .isEqualTo(web.get("cancelled").asDouble());
        } finally {
            WebTestApp.Probe.release.countDown();
        }
        assertThat(first.get(30, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
        assertThat(second.get(30, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
    }

    @Test
    void healthIsUpWithTheKeyNumbers() throws Exception {
        JsonNode health = json("/actuator/health/cosched");
        assertThat(health.get("status").asString()).isEqualTo("UP");
        JsonNode io = health.get("details").get("test-io");
        assertThat(io.get("state").asString()).isEqualTo("RUNNING");
        assertThat(io.get("threads").asInt()).isEqualTo(2);
        assertThat(io.has("stalledThreads")).isTrue();
    }

    @Test
    void theEndpointIsServedOnlyWhenExposedAndHealthCanBeSwitchedOff() throws Exception {
        // Spring Boot serves /actuator/health/{component} only when components are shown
        try (ConfigurableApplicationContext plain =
                WebTestApp.start("management.endpoint.health.show-components=always")) {
            Http h = new Http(WebTestApp.port(plain));
            assertThat(h.get("/actuator/cosched").statusCode()).isEqualTo(404);
            HttpResponse<String> health = h.get("/actuator/health/cosched");
            assertThat(health.statusCode()).isEqualTo(200);
            assertThat(JSON.readTree(health.body()).get("status").asString()).isEqualTo("UP");
        }
        try (ConfigurableApplicationContext off = WebTestApp.start(
                "management.health.cosched.enabled=false", "management.endpoint.health.show-components=always")) {
            assertThat(new Http(WebTestApp.port(off))
                            .get("/actuator/health/cosched")
                            .statusCode())
                    .isEqualTo(404);
        }
    }

    private static double metric(String name, String tag) throws Exception {
        JsonNode m = json("/actuator/metrics/" + name + (tag == null ? "" : "?tag=" + tag));
        return m.get("measurements").get(0).get("value").asDouble();
    }

    private static void awaitQuiet() throws Exception {
        JsonNode[] last = new JsonNode[1];
        Await.until(
                () -> {
                    JsonNode all =
                            JSON.readTree(app.http().get("/actuator/cosched").body());
                    last[0] = all;
                    return all.get("schedulers")
                                            .get("test-io")
                                            .get("coroutines")
                                            .asLong()
                                    == 0
                            && all.get("schedulers")
                                            .get("cosched")
                                            .get("coroutines")
                                            .asLong()
                                    == 0
                            && all.get("schedulers")
                                            .get("test-io")
                                            .get("timersPending")
                                            .asLong()
                                    == 0
                            && all.get("web").get("inFlight").asInt() == 0;
                },
                () -> "not quiet: " + last[0]);
    }
}
