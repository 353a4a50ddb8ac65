package io.cosched.jdbc;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.mysql.cj.NativeSession;
import com.mysql.cj.jdbc.JdbcConnection;
import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariPoolMXBean;
import io.cosched.IOManager;
import java.lang.reflect.Field;
import java.net.Socket;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.postgresql.PGConnection;
import org.postgresql.core.QueryExecutorBase;
import org.postgresql.jdbc.PgConnection;

/**
 * The real servers {@code .ci/services.sh} starts on loopback, through each driver this module puts on the loops:
 * PostgreSQL's, and MariaDB Connector/J and MySQL Connector/J against the MariaDB server (as autoconfigure's
 * {@code JdbcOnTheLoopContract} runs them). Found through the environment; a test that needs one calls
 * {@link #assumeConfigured()} first, so it skips with the reason where none is set.
 */
enum RealDatabase {
    POSTGRESQL(
            "PostgreSQL",
            "COSCHED_TEST_POSTGRES",
            "jdbc:postgresql:",
            "57014",
            // a name of its own: autoconfigure's fault test terminates the sessions named cosched-jdbc-test
            "ApplicationName=cosched-jdbc-module-test&sslmode=disable") {
        @Override
        String sleep(String seconds) {
            return "SELECT pg_sleep(" + seconds + ")";
        }

        @Override
        String sessionId() {
            return "SELECT pg_backend_pid()";
        }

        @Override
        String sessionsWithId() {
            return "SELECT count(*) FROM pg_stat_activity WHERE pid = ?";
        }

        @Override
        String runningStatementsOfSession() {
            return "SELECT count(*) FROM pg_stat_activity WHERE pid = ? AND state = 'active' AND query LIKE ?";
        }

        @Override
        String terminate(long id) {
            return "SELECT pg_terminate_backend(" + id + ")";
        }

        @Override
        Class<?> driverConnection() {
            return PGConnection.class;
        }

        @Override
        long driverSessionId(Object driver) {
            return ((PGConnection) driver).getBackendPID();
        }

        @Override
        Socket socketOf(Connection c) throws Exception {
            // the driver keeps its socket in its query executor's stream, which no public method hands out
            Object executor = c.unwrap(PgConnection.class).getQueryExecutor();
            Field stream = QueryExecutorBase.class.getDeclaredField("pgStream");
            stream.setAccessible(true);
            return ((org.postgresql.core.PGStream) stream.get(executor)).getSocket();
        }
    },

    MARIADB(
            "MariaDB Connector/J",
            "COSCHED_TEST_MARIADB",
            "jdbc:mariadb:",
            "70100",
            "sslMode=disable&connectTimeout=5000") {
        @Override
        Class<?> driverConnection() {
            return org.mariadb.jdbc.Connection.class;
        }

        @Override
        long driverSessionId(Object driver) {
            return ((org.mariadb.jdbc.Connection) driver).getThreadId();
        }

        @Override
        Socket socketOf(Connection c) throws Exception {
            // the client keeps it in a private field: no public method hands it out
            Object client = c.unwrap(org.mariadb.jdbc.Connection.class).getClient();
            Field socket = org.mariadb.jdbc.client.impl.StandardClient.class.getDeclaredField("socket");
            socket.setAccessible(true);
            return (Socket) socket.get(client);
        }
    },

    MYSQL("MySQL Connector/J", "COSCHED_TEST_MARIADB", "jdbc:mysql:", "70100", "sslMode=DISABLED&connectTimeout=5000") {
        @Override
        Class<?> driverConnection() {
            return JdbcConnection.class;
        }

        @Override
        long driverSessionId(Object driver) {
            return ((JdbcConnection) driver).getId();
        }

        @Override
        Socket socketOf(Connection c) throws Exception {
            return ((NativeSession) c.unwrap(JdbcConnection.class).getSession())
                    .getProtocol()
                    .getSocketConnection()
                    .getMysqlSocket();
        }
    };

    private final String driverName;
    private final String environment;
    private final String scheme;
    private final String cancelledSqlState;
    private final String parameters;

    RealDatabase(String driverName, String environment, String scheme, String cancelledSqlState, String parameters) {
        this.driverName = driverName;
        this.environment = environment;
        this.scheme = scheme;
        this.cancelledSqlState = cancelledSqlState;
        this.parameters = parameters;
    }

    /** The server's URL with this driver's scheme, or {@code null} when no server is configured. */
    String url() {
        String url = System.getenv(environment + "_URL");
        return url == null ? null : url.replaceFirst("^jdbc:[a-z]+:", scheme);
    }

    String user() {
        return System.getenv().getOrDefault(environment + "_USER", "cosched");
    }

    String password() {
        return System.getenv().getOrDefault(environment + "_PASSWORD", "cosched");
    }

    /** Skips the calling test, with the reason, when the environment names no server for this driver. */
    void assumeConfigured() {
        assumeTrue(
                url() != null,
                driverName + ": " + environment + "_URL is not set: .ci/services.sh starts the "
                        + "server on loopback and sets it (LoopBoundDataSourceTest and LoopGateTest run without one)");
    }

    /**
     * A pool configuration for this server of {@code maximumPoolSize} connections in all. Without TLS: a TLS
     * connection's socket is the JDK's SSLSocket layered over the loop's, which hides where the connection lives
     * (autoconfigure's tlsConnectionsLiveOnTheLoopsToo covers TLS on the loops).
     */
    HikariConfig config(String poolName, int maximumPoolSize) {
        HikariConfig c = new HikariConfig();
        c.setJdbcUrl(url() + (url().indexOf('?') >= 0 ? "&" : "?") + parameters);
        c.setUsername(user());
        c.setPassword(password());
        c.setPoolName(poolName);
        c.setMaximumPoolSize(maximumPoolSize);
        return c;
    }

    /** A connection of its own, over a JDK socket: to watch the tests' sessions from the server's side. */
    Connection admin() throws SQLException {
        return DriverManager.getConnection(url(), user(), password());
    }

    /** A statement that sleeps for {@code seconds}. */
    String sleep(String seconds) {
        return "SELECT SLEEP(" + seconds + ")";
    }

    /** One row, one column: the server's id of this session. */
    String sessionId() {
        return "SELECT CONNECTION_ID()";
    }

    /** One row, one column: how many sessions have the id given as the parameter (0 or 1). */
    String sessionsWithId() {
        return "SELECT count(*) FROM information_schema.PROCESSLIST WHERE ID = ?";
    }

    /** One row, one column: whether session {@code ?} runs a statement like {@code ?} now (0 or 1). */
    String runningStatementsOfSession() {
        return "SELECT count(*) FROM information_schema.PROCESSLIST WHERE ID = ? AND INFO LIKE ?";
    }

    /** A statement that ends session {@code id} on the server. */
    String terminate(long id) {
        return "KILL " + id;
    }

    /** The SQLState the driver fails a statement with when the server cancelled it. */
    String cancelledSqlState() {
        return cancelledSqlState;
    }

    /** The driver's own connection type, which the database's cancel unwraps a pooled connection to. */
    abstract Class<?> driverConnection();

    /** The server's id of the session behind the driver's connection {@code driver}, as the driver knows it. */
    abstract long driverSessionId(Object driver) throws SQLException;

    /** The socket the driver talks to the server over. */
    abstract Socket socketOf(Connection c) throws Exception;

    /** The server's id of {@code c}'s session, asked of the server over {@code c}. */
    long idOf(Connection c) throws SQLException {
        try (Statement s = c.createStatement();
                ResultSet rs = s.executeQuery(sessionId())) {
            rs.next();
            return rs.getLong(1);
        }
    }

    /** Whether the server still has session {@code id}, asked over {@code admin}. */
    boolean hasSession(Connection admin, long id) throws SQLException {
        return count(admin, sessionsWithId(), id, null) > 0;
    }

    /** Whether session {@code id} is running a statement containing {@code fragment} now, asked over {@code admin}. */
    boolean runs(Connection admin, long id, String fragment) throws SQLException {
        return count(admin, runningStatementsOfSession(), id, "%" + fragment + "%") > 0;
    }

    private static long count(Connection admin, String sql, long id, String like) throws SQLException {
        try (PreparedStatement ps = admin.prepareStatement(sql)) {
            ps.setLong(1, id);
            if (like != null) {
                ps.setString(2, like);
            }
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }

    @Override
    public String toString() {
        return driverName;
    }

    /** The pool of loop {@code loopIndex} of {@code ds}, or null before it started. */
    static HikariPoolMXBean poolOf(LoopBoundDataSource ds, int loopIndex) {
        return ds.pools().get(loopIndex).getHikariPoolMXBean();
    }

    /** Connections out, per loop's pool (a pool not started yet has none). */
    static List<Integer> activeConnections(LoopBoundDataSource ds) {
        List<Integer> active = new ArrayList<>();
        for (int i = 0; i < ds.pools().size(); i++) {
            HikariPoolMXBean p = poolOf(ds, i);
            active.add(p == null ? 0 : p.getActiveConnections());
        }
        return active;
    }

    /** A started IOManager of two loops, for the data sources under test. */
    static IOManager twoLoops(String name) {
        // no stall watchdog: a cold JVM's first SCRAM handshake is CPU-heavy, and a spill would move coroutines
        IOManager io = IOManager.builder()
                .name(name)
                .threads(2)
                .stallThreshold(Duration.ZERO)
                .build();
        io.start();
        return io;
    }
}
