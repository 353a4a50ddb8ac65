package io.cosched.spring.boot.actuate;

import static org.assertj.core.api.Assertions.assertThat;

import io.cosched.CarrierStats;
import io.cosched.IOManager;
import io.cosched.PoolScheduler;
import io.cosched.SchedulerStats;
import io.cosched.spring.web.CoschedWebStats;
import io.cosched.spring.web.netty.ServerConnections;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.Proxy;
import java.lang.reflect.RecordComponent;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The endpoint's JSON, as Jackson writes it: every component of the runtime's stats records and every
 * reading of the web and server views is a key, with no line of the endpoint naming it, and the keys
 * the endpoint has always written keep their names and forms.
 */
@Timeout(60)
class CoschedEndpointJsonTest {

    private static final JsonMapper JSON = JsonMapper.builder().build();

    /** What {@code /actuator/cosched} wrote for a scheduler before its reports embedded the stats records. */
    private static final List<String> SCHEDULER_KEYS_SO_FAR = List.of(
            "type",
            "mode",
            "transport",
            "state",
            "threads",
            "activeThreads",
            "idleThreads",
            "stalledThreads",
            "queueDepth",
            "coroutines",
            "ready",
            "running",
            "waiting",
            "sleeping",
            "timersPending",
            "completedTasks",
            "localWakeups",
            "remoteWakeups",
            "monitorWakeups",
            "stalls",
            "warmUpStalls",
            "starvations",
            "forks",
            "forksFailed",
            "forksCancelled",
            "carriers");

    private static final List<String> CARRIER_KEYS_SO_FAR = List.of(
            "index", "thread", "state", "queueDepth", "coroutines", "localWakeups", "remoteWakeups", "monitorWakeups");

    private static final List<String> WEB_KEYS_SO_FAR = List.of(
            "inFlight",
            "limit",
            "queued",
            "timedOut",
            "shed",
            "queueTimedOut",
            "shedEarly",
            "cancelled",
            "coroutinesStarted",
            "inlined",
            "offLoop");

    private static final List<String> SERVER_KEYS_SO_FAR =
            List.of("accepted", "open", "listenQueue", "listenOverflows");

    private static PoolScheduler pool;
    private static IOManager io;

    @BeforeAll
    static void start() {
        pool = PoolScheduler.builder().name("pool").threads(2).build();
        io = IOManager.builder().name("io").threads(1).build();
        pool.start();
        io.start();
    }

    @AfterAll
    static void stop() {
        pool.close();
        io.close();
    }

    private static JsonNode report() {
        CoschedEndpoint endpoint =
                new CoschedEndpoint(() -> List.of(pool, io), () -> WEB, ServerConnections::new, false);
        return JSON.valueToTree(endpoint.report());
    }

    @Test
    void aSchedulerIsItsStatsRecordWithoutTheNameAndWithItsTransportAndCarriers() {
        Set<String> expected = components(SchedulerStats.class);
        expected.remove("name"); // the key it is listed under
        expected.addAll(List.of("transport", "carriers"));
        for (JsonNode s : List.of(
                report().get("schedulers").get("pool"),
                report().get("schedulers").get("io"))) {
            assertThat(keys(s)).isEqualTo(expected).containsAll(SCHEDULER_KEYS_SO_FAR);
        }
    }

    @Test
    void aCarrierIsItsStatsRecord() {
        JsonNode carriers = report().get("schedulers").get("pool").get("carriers");
        assertThat(carriers).hasSize(2);
        for (JsonNode c : carriers) {
            assertThat(keys(c)).isEqualTo(components(CarrierStats.class)).containsAll(CARRIER_KEYS_SO_FAR);
        }
    }

    @Test
    void theWebCountersAreEveryReadingOfTheWebStats() {
        JsonNode web = report().get("web");
        assertThat(keys(web)).isEqualTo(readings(CoschedWebStats.class)).containsAll(WEB_KEYS_SO_FAR);
        assertThat(web.get("inFlight").asInt()).isEqualTo("inFlight".length());
        assertThat(web.get("offLoop").asLong()).isEqualTo("offLoop".length());
    }

    @Test
    void theServerIsEveryReadingOfItsConnections() {
        JsonNode server = report().get("server");
        assertThat(keys(server)).isEqualTo(readings(ServerConnections.class)).containsAll(SERVER_KEYS_SO_FAR);
        assertThat(server.get("accepted").asLong()).isZero();
        assertThat(server.get("listenQueue").asLong()).isEqualTo(ServerConnections.UNKNOWN); // not listening
    }

    @Test
    void enumsAreWrittenAsTheyAlwaysWere() {
        JsonNode p = report().get("schedulers").get("pool");
        JsonNode i = report().get("schedulers").get("io");
        assertThat(p.get("type").asString()).isEqualTo("pool");
        assertThat(i.get("type").asString()).isEqualTo("io");
        assertThat(p.get("mode").asString())
                .isEqualTo(pool.stats().mode().name().toLowerCase(Locale.ROOT));
        assertThat(p.get("transport").asString()).isEqualTo("none");
        assertThat(i.get("transport").asString())
                .isEqualTo(io.transport().name().toLowerCase(Locale.ROOT));
        assertThat(p.get("state").asString()).isEqualTo("RUNNING");
        assertThat(p.get("carriers").get(0).get("state").asString()).isEqualTo("idle");
        assertThat(p.get("carriers").get(1).get("thread").asString()).isEqualTo("pool-1");
        assertThat(p.get("threads").asInt()).isEqualTo(2);
        assertThat(p.get("stalls").isNumber()).isTrue();
    }

    private static Set<String> components(Class<? extends Record> type) {
        Set<String> names = new TreeSet<>();
        for (RecordComponent c : type.getRecordComponents()) {
            names.add(c.getName());
        }
        return names;
    }

    /** The no-argument int and long methods of a read-only view, as a person would list them. */
    private static Set<String> readings(Class<?> type) {
        Set<String> names = new TreeSet<>();
        Arrays.stream(type.getDeclaredMethods())
                .filter(m -> Modifier.isPublic(m.getModifiers()) && !Modifier.isStatic(m.getModifiers()))
                .filter(m -> m.getParameterCount() == 0)
                .filter(m -> m.getReturnType() == int.class || m.getReturnType() == long.class)
                .map(Method::getName)
                .forEach(names::add);
        return names;
    }

    private static Set<String> keys(JsonNode node) {
        return new TreeSet<>(node.propertyNames());
    }

    /** Web counters whose every reading is the length of its name: whatever readings the interface has. */
    private static final CoschedWebStats WEB = (CoschedWebStats) Proxy.newProxyInstance(
            CoschedWebStats.class.getClassLoader(), new Class<?>[] {CoschedWebStats.class}, (proxy, method, args) -> {
                int n = method.getName().length();
                return method.getReturnType() == long.class ? (Object) (long) n : (Object) n;
            });
}
