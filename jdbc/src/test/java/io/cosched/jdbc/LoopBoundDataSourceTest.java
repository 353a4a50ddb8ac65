package io.cosched.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.cosched.IOManager;
import io.cosched.net.LoopSocketFactory;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** How the pools are made from one configuration; no database needed ({@code PostgresLoopBoundDataSourceTest} runs queries). */
@Timeout(60)
class LoopBoundDataSourceTest {

    private IOManager io;

    @BeforeEach
    void start() {
        io = IOManager.builder().name("ds-io").threads(3).build();
    }

    @AfterEach
    void stop() {
        io.stop(Duration.ofSeconds(5));
    }

    private static HikariConfig postgres(int max) {
        HikariConfig c = new HikariConfig();
        c.setJdbcUrl("jdbc:postgresql://127.0.0.1:1/app?ApplicationName=orders");
        c.setUsername("u");
        c.setPassword("p");
        c.setPoolName("orders");
        c.setMaximumPoolSize(max);
        return c;
    }

    @Test
    void onePoolPerLoopSharesTheConfiguredSizeAndOpensItsConnectionsOnItsLoop() {
        HikariConfig template = postgres(10);
        template.setMinimumIdle(4);
        try (LoopBoundDataSource ds = new LoopBoundDataSource(template, io)) {
            assertThat(ds).isInstanceOf(HikariDataSource.class);
            assertThat(ds.getMaximumPoolSize()).isEqualTo(10); // it reports the configuration it was made from
            assertThat(ds.pools())
                    .extracting(HikariDataSource::getPoolName)
                    .containsExactly("orders-loop0", "orders-loop1", "orders-loop2");
            assertThat(ds.pools())
                    .extracting(HikariDataSource::getMaximumPoolSize)
                    .containsExactly(4, 3, 3);
            assertThat(ds.pools()).extracting(HikariDataSource::getMinimumIdle).containsExactly(2, 1, 1);
            // the IOManager itself, not the first running one of its name (ds-io#<n>/2)
            assertThat(ds.pools().get(2).getJdbcUrl())
                    .matches(
                            "jdbc:postgresql://127\\.0\\.0\\.1:1/app\\?ApplicationName=orders"
                                    + "&socketFactory=io\\.cosched\\.net\\.LoopSocketFactory&socketFactoryArg=ds-io%23\\d+%2F2");
            assertThat(ds.pools()).extracting(HikariDataSource::getUsername).containsOnly("u");
            assertThat(ds.isRunning()).isFalse(); // pools start on first use
            assertThat(ds.getHikariPoolMXBean().getTotalConnections()).isZero();
        }
    }

    @Test
    void everyLoopGetsAtLeastOneConnection() {
        try (LoopBoundDataSource ds = new LoopBoundDataSource(postgres(2), io)) {
            assertThat(ds.pools())
                    .extracting(HikariDataSource::getMaximumPoolSize)
                    .containsExactly(1, 1, 1);
        }
    }

    @Test
    void itSaysOnceThatTheSizeIsTheTotalAndWhatEachLoopGets() {
        try (LogLines log = new LogLines();
                LoopBoundDataSource ds = new LoopBoundDataSource(postgres(10), io)) {
            assertThat(log.lines())
                    .containsExactly("INFO orders: maximumPoolSize 10 is the total over 3 loops: 3 to 4 connections "
                            + "per loop (orders-loop0 to orders-loop2)");
            assertThat(ds.lines()).extracting(LoopBoundDataSource.Line::size).containsExactly(4, 3, 3);
        }
    }

    @Test
    void itWarnsWhenALoopGetsFewerThanTwoConnections() {
        try (LogLines log = new LogLines();
                LoopBoundDataSource ds = new LoopBoundDataSource(postgres(2), io)) {
            assertThat(log.lines())
                    .containsExactly(
                            "INFO orders: maximumPoolSize 2 is the total over 3 loops: 1 connection per loop "
                                    + "(orders-loop0 to orders-loop2; 3 in all, since every loop gets at least one)",
                            "WARNING orders: a loop's connection pool has 1 connection (maximumPoolSize 2 over 3 loops): a "
                                    + "coroutine that holds it and asks for a second (REQUIRES_NEW, a query while a "
                                    + "stream is open) waits for itself until the connection timeout; set "
                                    + "maximumPoolSize to at least 6 (2 per loop)");
        }
    }

    @Test
    void onlyAPostgresMariaDbOrMySqlUrlWithoutASocketFactoryOfItsOwnCanBeBound() {
        HikariConfig h2 = new HikariConfig();
        h2.setJdbcUrl("jdbc:h2:mem:x");
        assertThat(LoopBoundDataSource.unsupportedReason(h2))
                .contains("is none of PostgreSQL's (jdbc:postgresql:), "
                        + "MariaDB's (jdbc:mariadb:) or MySQL's (jdbc:mysql:)");
        HikariConfig own = postgres(4);
        own.setJdbcUrl(own.getJdbcUrl() + "&socketFactory=com.example.Mine");
        assertThat(LoopBoundDataSource.unsupportedReason(own)).isEqualTo("it names a socket factory of its own");
        HikariConfig byClass = new HikariConfig();
        byClass.setDataSourceClassName("org.postgresql.ds.PGSimpleDataSource");
        assertThat(LoopBoundDataSource.unsupportedReason(byClass)).contains("DataSource (class) instead of a JDBC URL");
        assertThat(LoopBoundDataSource.unsupportedReason(postgres(4))).isNull();
        assertThatThrownBy(() -> new LoopBoundDataSource(h2, io))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("template: its JDBC URL 'jdbc:h2:mem:x' is none of");
        HikariConfig otherDriver = config("jdbc:mysql://db/app");
        otherDriver.setDriverClassName("org.postgresql.Driver");
        assertThat(LoopBoundDataSource.unsupportedReason(otherDriver))
                .contains("with driver org.postgresql.Driver is none of");
        assertThat(LoopBoundDataSource.unsupportedReason(config("jdbc:mariadb://db/app")))
                .isNull();
        assertThat(LoopBoundDataSource.unsupportedReason(config("jdbc:mysql://db/app")))
                .isNull();
    }

    @Test
    void eachDriversPoolsOpenTheirConnectionsOnTheirOwnLoop() {
        try (LoopBoundDataSource maria =
                new LoopBoundDataSource(config("jdbc:mariadb://db:3306/app?useSsl=false"), io)) {
            String key = java.net.URLEncoder.encode(
                    LoopSocketFactory.argument(io, -1), java.nio.charset.StandardCharsets.UTF_8);
            assertThat(key).matches("ds-io%23\\d+");
            assertThat(maria.pools())
                    .extracting(HikariDataSource::getJdbcUrl)
                    .containsExactly(
                            "jdbc:mariadb://db:3306/app?useSsl=false&socketFactory=io.cosched.jdbc.MariaDbLoopSockets&coschedLoop="
                                    + key + "%2F0",
                            "jdbc:mariadb://db:3306/app?useSsl=false&socketFactory=io.cosched.jdbc.MariaDbLoopSockets&coschedLoop="
                                    + key + "%2F1",
                            "jdbc:mariadb://db:3306/app?useSsl=false&socketFactory=io.cosched.jdbc.MariaDbLoopSockets&coschedLoop="
                                    + key + "%2F2");
        }
        // MariaDB's driver named with a jdbc:mysql: URL is MariaDB's
        HikariConfig mariaAsMySql = config("jdbc:mysql://db/app");
        mariaAsMySql.setDriverClassName("org.mariadb.jdbc.Driver");
        try (LoopBoundDataSource ds = new LoopBoundDataSource(mariaAsMySql, io)) {
            assertThat(ds.pools().get(0).getJdbcUrl()).contains("socketFactory=io.cosched.jdbc.MariaDbLoopSockets");
        }
        try (LoopBoundDataSource mysql = new LoopBoundDataSource(config("jdbc:mysql://db/app"), io)) {
            assertThat(mysql.pools())
                    .extracting(HikariDataSource::getJdbcUrl)
                    .allMatch(u -> u.equals("jdbc:mysql://db/app?socketFactory=io.cosched.jdbc.MySqlLoopSockets"));
            // Connector/J hands its socket factory no option of ours: each pool's DataSource names the loop
            assertThat(mysql.pools())
                    .extracting(p -> p.getDataSource().toString())
                    .containsExactly(
                            "MySqlLoopSockets.Connecting[LoopSocketFactory[ds-io/0]]",
                            "MySqlLoopSockets.Connecting[LoopSocketFactory[ds-io/1]]",
                            "MySqlLoopSockets.Connecting[LoopSocketFactory[ds-io/2]]");
        }
    }

    private static HikariConfig config(String url) {
        HikariConfig c = new HikariConfig();
        c.setJdbcUrl(url);
        c.setMaximumPoolSize(3);
        return c;
    }

    @Test
    void anIOManagerThatWasNeverStartedIsNamedWithItsStateInsteadOfConnecting() {
        IOManager idle = IOManager.builder().name("never-started").threads(1).build();
        try (LoopBoundDataSource ds = new LoopBoundDataSource(postgres(2), idle)) {
            assertThatThrownBy(ds::getConnection)
                    .isInstanceOf(java.sql.SQLException.class)
                    .hasMessage("IOManager 'never-started' is NEW (expected: RUNNING): the connections of data source "
                            + "'orders' live on its loops; start it before the first query");
            assertThat(ds.pools().get(0).getHikariPoolMXBean())
                    .as("no pool was started")
                    .isNull();
        } finally {
            idle.stop(java.time.Duration.ofSeconds(10));
        }
    }

    @Test
    void aClosedDataSourceClosesEveryPoolAndRefusesConnections() {
        LoopBoundDataSource ds = new LoopBoundDataSource(postgres(3), io);
        ds.close();
        assertThat(ds.isClosed()).isTrue();
        assertThat(ds.pools()).allMatch(HikariDataSource::isClosed);
        assertThatThrownBy(ds::getConnection)
                .isInstanceOf(java.sql.SQLException.class)
                .hasMessageContaining("has been closed");
    }
}
