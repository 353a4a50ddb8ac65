package io.cosched.demo;

import static org.assertj.core.api.Assertions.assertThat;

import io.cosched.jdbc.LoopBoundDataSource;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The orders API on a real PostgreSQL server, found through {@code COSCHED_TEST_POSTGRES_URL}
 * ({@code _USER}, {@code _PASSWORD}): {@code .ci/run} installs PostgreSQL from Debian's packages,
 * starts it on 127.0.0.1 and sets them; GitHub Actions uses a service container. Without the
 * variable the test is skipped, and {@link H2OrdersTest} still covers the same code.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
@ActiveProfiles("postgres")
@EnabledIfEnvironmentVariable(
        named = "COSCHED_TEST_POSTGRES_URL",
        matches = ".+",
        disabledReason = "no PostgreSQL server: set COSCHED_TEST_POSTGRES_URL (bash .ci/run starts one)")
class PostgresServerOrdersTest extends OrdersContract {

    @Autowired
    DataSource dataSource;

    @Test
    void theOrdersQueriesRunOnConnectionsOfTheHandlersOwnLoops() throws Exception {
        assertThat(dataSource).isInstanceOf(LoopBoundDataSource.class);
        assertThat(((LoopBoundDataSource) dataSource).pools())
                .hasSize(io.stats().threads());
        for (int i = 0; i < 5; i++) {
            api.get("/api/orders"); // the pools start and open their connections
        }
        long remote = io.stats().remoteWakeups();
        long local = io.stats().localWakeups();
        for (int i = 0; i < 10; i++) {
            assertThat(api.get("/api/orders").statusCode()).isEqualTo(200);
        }
        assertThat(io.stats().localWakeups() - local).isGreaterThanOrEqualTo(10);
        assertThat(io.stats().remoteWakeups() - remote).isZero();
    }

    @DynamicPropertySource
    static void postgres(DynamicPropertyRegistry registry) {
        registry.add("spring.datasource.url", () -> System.getenv("COSCHED_TEST_POSTGRES_URL"));
        registry.add("spring.datasource.username", () -> env("COSCHED_TEST_POSTGRES_USER", "cosched"));
        registry.add("spring.datasource.password", () -> env("COSCHED_TEST_POSTGRES_PASSWORD", "cosched"));
    }

    private static String env(String name, String fallback) {
        String v = System.getenv(name);
        return v == null || v.isEmpty() ? fallback : v;
    }
}
