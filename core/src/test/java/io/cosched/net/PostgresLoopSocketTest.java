package io.cosched.net;

import static io.cosched.TestSupport.eventually;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.cosched.Coroutine;
import io.cosched.IOManager;
import io.cosched.TestSupport;
import java.net.SocketTimeoutException;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Properties;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The PostgreSQL driver over {@link LoopSocketFactory}, against the real server {@code .ci/run}
 * starts on loopback (skipped with the reason where none is configured; {@link LoopSocketTest}
 * covers the socket itself without a database).
 */
@Timeout(60)
class PostgresLoopSocketTest {

    private static final String URL = System.getenv("COSCHED_TEST_POSTGRES_URL");
    private static final String USER = System.getenv().getOrDefault("COSCHED_TEST_POSTGRES_USER", "cosched");
    private static final String PASSWORD = System.getenv().getOrDefault("COSCHED_TEST_POSTGRES_PASSWORD", "cosched");

    private IOManager io;

    @BeforeAll
    static void needsPostgres() {
        assumeTrue(
                URL != null, "COSCHED_TEST_POSTGRES_URL is not set: .ci/run starts PostgreSQL on loopback and sets it");
    }

    @BeforeEach
    void start() {
        // no stall watchdog: a cold JVM spends ~200 ms of CPU in the first TLS and SCRAM handshakes,
        // and the spill that would follow moves the coroutine off the loop this test watches
        io = IOManager.builder()
                .name("pg-io")
                .threads(2)
                .stallThreshold(Duration.ZERO)
                .build();
        io.start();
    }

    @AfterEach
    void stop() {
        io.stop(Duration.ofSeconds(10));
    }

    /** A connection whose socket lives on loop {@code loop} ({@code -1}: the connecting coroutine's). */
    private static Connection connect(int loopIndex, String... more) throws SQLException {
        Properties p = new Properties();
        p.setProperty("user", USER);
        p.setProperty("password", PASSWORD);
        p.setProperty("socketFactory", LoopSocketFactory.class.getName());
        p.setProperty("socketFactoryArg", loopIndex < 0 ? "pg-io" : "pg-io/" + loopIndex);
        for (int i = 0; i < more.length; i += 2) {
            p.setProperty(more[i], more[i + 1]);
        }
        return DriverManager.getConnection(URL, p);
    }

    private static int queryLoop(Connection c, int n) throws SQLException {
        int sum = 0;
        try (PreparedStatement ps = c.prepareStatement("SELECT ?::int + 1, pg_sleep(0.001)")) {
            for (int i = 0; i < n; i++) {
                ps.setInt(1, i);
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    sum += rs.getInt(1);
                }
            }
        }
        return sum;
    }

    @Test
    @Tag("carrier-only")
    void queriesOnALoopConnectionAreResumedByThatLoopThreadAlone() throws Exception {
        for (int loopIndex = 0; loopIndex < 2; loopIndex++) {
            int home = loopIndex;
            long remoteBefore = io.carrierStats().get(home).remoteWakeups();
            long localBefore = io.carrierStats().get(home).localWakeups();
            int sum = io.spawnOn(home, () -> {
                        try (Connection c = connect(-1)) {
                            assertThat(TestSupport.carrierName()).isEqualTo("pg-io-" + home);
                            return queryLoop(c, 50);
                        }
                    })
                    .join();
            assertThat(sum).isEqualTo(50 * 51 / 2);
            assertThat(io.carrierStats().get(home).localWakeups() - localBefore)
                    .as("loop %d", home)
                    .isGreaterThanOrEqualTo(50);
            assertThat(io.carrierStats().get(home).remoteWakeups() - remoteBefore)
                    .as("loop %d", home)
                    .isZero();
        }
        // the same queries over the driver's own JDK sockets are woken by the JDK's poller threads
        long remoteBefore = io.carrierStats().get(0).remoteWakeups();
        io.spawnOn(0, () -> {
                    Properties p = new Properties();
                    p.setProperty("user", USER);
                    p.setProperty("password", PASSWORD);
                    try (Connection c = DriverManager.getConnection(URL, p)) {
                        return queryLoop(c, 50);
                    }
                })
                .join();
        assertThat(io.carrierStats().get(0).remoteWakeups() - remoteBefore).isGreaterThanOrEqualTo(50);
    }

    @Test
    void sslModeRequireLayersTlsOverTheLoopSocket() throws Exception {
        boolean[] serverTls = new boolean[1];
        try (Connection c = connect(0);
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SHOW ssl")) {
            rs.next();
            serverTls[0] = "on".equals(rs.getString(1));
        }
        assumeTrue(serverTls[0], "the server has ssl=off (.ci/services.sh switches it on)");
        long remoteBefore = io.carrierStats().get(1).remoteWakeups();
        boolean encrypted = io.spawnOn(1, () -> {
                    try (Connection c = connect(1, "sslmode", "require");
                            Statement s = c.createStatement();
                            ResultSet rs = s.executeQuery("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()")) {
                        rs.next();
                        queryLoop(c, 10);
                        return rs.getBoolean(1);
                    }
                })
                .join();
        assertThat(encrypted).isTrue();
        if (TestSupport.carrierMode()) {
            assertThat(io.carrierStats().get(1).remoteWakeups() - remoteBefore).isZero();
        }
    }

    @Test
    void theDriversSocketTimeoutEndsAQueryThatTakesTooLong() throws Exception {
        long started = System.nanoTime();
        Throwable failure = io.spawn(() -> {
                    Connection c = connect(-1, "socketTimeout", "1");
                    try (c;
                            Statement s = c.createStatement()) {
                        s.execute("SELECT pg_sleep(5)");
                        return null;
                    } catch (SQLException e) {
                        assertThat(c.isClosed()).isTrue(); // the driver gives the connection up
                        return e;
                    }
                })
                .join();
        assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(4));
        assertThat(failure).isInstanceOf(SQLException.class).hasRootCauseInstanceOf(SocketTimeoutException.class);
        assertThat(((SQLException) failure).getSQLState()).isEqualTo("08006");
    }

    @Test
    void aQueryTimeoutIsCancelledOverASecondLoopSocket() throws Exception {
        SQLException failure = io.spawn(() -> {
                    try (Connection c = connect(-1);
                            Statement s = c.createStatement()) {
                        s.setQueryTimeout(1);
                        s.execute("SELECT pg_sleep(10)");
                        return null;
                    } catch (SQLException e) {
                        return e;
                    }
                })
                .join();
        assertThat((Throwable) failure).isNotNull();
        assertThat(failure.getSQLState()).isEqualTo("57014"); // canceling statement due to user request
    }

    @Test
    void aTerminatedBackendEndsTheWaitingQueryWithAnSQLException() throws Exception {
        // a name of its own: a backend of an earlier run may still be sleeping server-side
        String name = "cosched-terminate-" + java.util.UUID.randomUUID();
        Coroutine<SQLException> waiting = io.spawn(() -> {
            try (Connection c = connect(-1);
                    Statement s = c.createStatement()) {
                s.execute("SET application_name = '" + name + "'");
                s.execute("SELECT pg_sleep(30)");
                return null;
            } catch (SQLException e) {
                return e;
            }
        });
        try (Connection admin = connect(0);
                Statement s = admin.createStatement()) {
            eventually(Duration.ofSeconds(10), () -> terminate(s, name) > 0, waiting::toString);
        }
        SQLException failure = waiting.join();
        assertThat((Throwable) failure).isNotNull();
        // the server's FATAL message (57P01), or the end of the connection when that was not read (08006)
        assertThat(failure.getSQLState()).isIn("57P01", "08006");
    }

    private static int terminate(Statement s, String name) {
        try (ResultSet rs = s.executeQuery("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                + "WHERE application_name = '" + name + "' AND state = 'active'")) {
            rs.next();
            return rs.getInt(1);
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    @Test
    void cancellingTheCoroutineEndsItsQueryAndClosesTheConnection() throws Exception {
        String name = "cosched-cancel-" + java.util.UUID.randomUUID();
        Connection[] held = new Connection[1];
        Coroutine<Void> query = io.spawn(() -> {
            held[0] = connect(-1);
            try (Statement s = held[0].createStatement()) {
                s.execute("SET application_name = '" + name + "'");
                s.execute("SELECT pg_sleep(30)");
            }
            return null;
        });
        try (Connection admin = connect(0);
                Statement s = admin.createStatement()) {
            eventually(Duration.ofSeconds(10), () -> active(s, name) == 1, query::toString);
        }
        query.cancel();
        assertThatThrownBy(query::join).isInstanceOf(java.util.concurrent.CancellationException.class);
        eventually(Duration.ofSeconds(10), () -> isClosed(held[0]), () -> "connection still open");
    }

    private static int active(Statement s, String name) {
        try (ResultSet rs = s.executeQuery(
                "SELECT count(*) FROM pg_stat_activity WHERE application_name = '" + name + "' AND state = 'active'")) {
            rs.next();
            return rs.getInt(1);
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    private static boolean isClosed(Connection c) {
        try {
            return c != null && c.isClosed();
        } catch (SQLException e) {
            return true;
        }
    }
}
