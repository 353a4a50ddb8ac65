package io.cosched.sample;

import static org.assertj.core.api.Assertions.assertThat;

import io.cosched.IOManager;
import io.cosched.jdbc.LoopBoundDataSource;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * Spring Data JPA and Hibernate in {@code @Transactional} services called from coroutine handlers, on
 * the per-loop PostgreSQL pools: a commit stays, a rollback leaves nothing, a lazy collection loads
 * inside its transaction, and the answers to all those statements wake their coroutines from their
 * own loops (two loops, so a wake-up from the other loop or any other thread would count as remote).
 * Skipped without a server ({@code .ci/run} starts one).
 */
@SpringBootTest(
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {
            "cosched.io.threads=2", "sample.password-encoding=noop",
            "spring.datasource.hikari.maximum-pool-size=4", "spring.datasource.hikari.minimum-idle=4",
            "sample.slow-database-switch=true"
        })
@EnabledIfEnvironmentVariable(
        named = "COSCHED_TEST_POSTGRES_URL",
        matches = ".+",
        disabledReason = "no PostgreSQL server: set COSCHED_TEST_POSTGRES_URL (bash .ci/run starts one)")
@Timeout(120)
class JpaOnTheLoopTest {

    private static final String URL = System.getenv("COSCHED_TEST_POSTGRES_URL");
    private static final String ADMIN = Api.basic("admin", "secret");
    private static final Pattern BALANCE = Pattern.compile("\"balanceCents\":(\\d+)");

    @DynamicPropertySource
    static void postgres(DynamicPropertyRegistry registry) {
        registry.add("spring.datasource.url", () -> URL);
        registry.add(
                "spring.datasource.username",
                () -> System.getenv().getOrDefault("COSCHED_TEST_POSTGRES_USER", "cosched"));
        registry.add(
                "spring.datasource.password",
                () -> System.getenv().getOrDefault("COSCHED_TEST_POSTGRES_PASSWORD", "cosched"));
    }

    @LocalServerPort
    int port;

    @Autowired
    IOManager io;

    @Autowired
    DataSource dataSource;

    @Test
    void transactionsCommitRollBackAndLoadLazilyWithEveryAnswerResumedByItsOwnLoop() throws Exception {
        Api api = new Api(port);
        long account = 7;
        String run = Long.toString(System.nanoTime(), 36);
        for (int i = 0; i < 10; i++) { // the pools open their connections, the JIT settles
            assertThat(api.get("/api/accounts/" + account, ADMIN).statusCode()).isEqualTo(200);
        }
        long before = balance(api.get("/api/accounts/" + account, ADMIN));
        long remote = io.stats().remoteWakeups();
        long local = io.stats().localWakeups();

        int rounds = 20;
        for (int i = 0; i < rounds; i++) {
            HttpResponse<String> committed = api.postJson(
                    "/api/accounts/" + account + "/deposits",
                    ADMIN,
                    "{\"cents\": 5, \"reference\": \"ok-" + run + "-" + i + "\"}");
            assertThat(committed.statusCode()).as(committed.body()).isEqualTo(200);
            HttpResponse<String> rejected = api.postJson(
                    "/api/accounts/" + account + "/deposits",
                    ADMIN,
                    "{\"cents\": 1000, \"reference\": \"rollback-" + run + "-" + i + "\"}");
            assertThat(rejected.statusCode()).as(rejected.body()).isEqualTo(422);
            HttpResponse<String> statement = api.get("/api/accounts/" + account + "/statement", ADMIN);
            assertThat(statement.statusCode()).isEqualTo(200);
            // the lazy collection, loaded inside the transaction: every committed deposit, no rejected one
            assertThat(statement.body())
                    .contains("\"ok-" + run + "-" + i + "\"")
                    .doesNotContain("rollback-" + run);
        }
        assertThat(balance(api.get("/api/accounts/" + account, ADMIN))).isEqualTo(before + 5L * rounds);

        long localDelta = io.stats().localWakeups() - local;
        long remoteDelta = io.stats().remoteWakeups() - remote;
        // each request runs several statements (select, insert, update, commit or rollback): each answer a wake-up
        assertThat(localDelta)
                .as("local wake-ups over %d requests", 3 * rounds)
                .isGreaterThanOrEqualTo(3L * rounds * 2);
        // HikariCP's own thread may hand a connection to a coroutine waiting in its pool now and then:
        // answers resumed by another thread would show as hundreds
        assertThat(remoteDelta)
                .as("remote wake-ups against %d local", localDelta)
                .isLessThanOrEqualTo(localDelta / 50);
        assertThat(dataSource).isInstanceOf(LoopBoundDataSource.class);
        assertThat(((LoopBoundDataSource) dataSource).pools()).hasSize(2);
    }

    /** The benchmarks' switch: an admin makes every transaction hold its connection in PostgreSQL, and undoes it. */
    @Test
    void theSlowDatabaseSwitchHoldsEachTransactionInPostgresUntilTurnedOff() throws Exception {
        Api api = new Api(port);
        assertThat(api.put("/api/admin/slow-database?ms=300", Api.basic("user", "secret"))
                        .statusCode())
                .as("admins only")
                .isEqualTo(403);
        HttpResponse<String> on = api.put("/api/admin/slow-database?ms=300", ADMIN);
        assertThat(on.body()).isEqualTo("slow-database: 300 ms");
        try {
            long start = System.nanoTime();
            assertThat(api.get("/api/accounts/7", ADMIN).statusCode()).isEqualTo(200);
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(Duration.ofMillis(300));
            assertThat(api.put("/api/admin/slow-database?ms=-1", ADMIN).statusCode())
                    .isEqualTo(400);
        } finally {
            assertThat(api.put("/api/admin/slow-database?ms=0", ADMIN).body()).isEqualTo("slow-database: 0 ms");
        }
    }

    private static long balance(HttpResponse<String> account) {
        assertThat(account.statusCode()).as(account.body()).isEqualTo(200);
        Matcher m = BALANCE.matcher(account.body());
        assertThat(m.find()).as(account.body()).isTrue();
        return Long.parseLong(m.group(1));
    }
}
