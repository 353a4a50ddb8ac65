package io.cosched.demo;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.testcontainers.service.connection.ServiceConnection;
import org.springframework.test.context.ActiveProfiles;
import org.testcontainers.junit.jupiter.Container;
import org.testcontainers.junit.jupiter.Testcontainers;
import org.testcontainers.postgresql.PostgreSQLContainer;

/**
 * The orders API on PostgreSQL in a Testcontainers container, wired by {@code @ServiceConnection}.
 * Skipped where no Docker engine runs (this project's own CI machine); it runs on GitHub Actions.
 * {@link PostgresServerOrdersTest} runs the same tests against a PostgreSQL server without Docker.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
@ActiveProfiles("postgres")
@Testcontainers(disabledWithoutDocker = true)
class PostgresContainerOrdersTest extends OrdersContract {

    @Container
    @ServiceConnection
    static final PostgreSQLContainer POSTGRES = new PostgreSQLContainer("postgres:16-alpine");
}
