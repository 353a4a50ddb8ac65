package io.cosched.jdbc;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import com.zaxxer.hikari.HikariPoolMXBean;
import com.zaxxer.hikari.metrics.MetricsTrackerFactory;
import com.zaxxer.hikari.pool.HikariPool;
import io.cosched.Arguments;
import io.cosched.IOManager;
import io.cosched.SchedulerStats;
import io.cosched.net.LoopSocketFactory;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CancellationException;
import org.jspecify.annotations.Nullable;

/**
 * A HikariCP {@code DataSource} for PostgreSQL, MariaDB or MySQL whose connections live on an
 * IOManager's event loops: behind it one Hikari pool per loop, each opening its connections on its
 * loop through {@link LoopSocketFactory} (the PostgreSQL driver's socket factory;
 * {@link MariaDbLoopSockets} and {@link MySqlLoopSockets} adapt it to MariaDB Connector/J and MySQL
 * Connector/J). {@link #getConnection()} hands a coroutine a connection of its own loop
 * (connections never migrate), so the loop that reads the answer to a query is the
 * thread that resumes the coroutine. Any other thread gets one of the least loaded loop; a loop
 * thread itself, outside any coroutine, one of another loop, since it would wait for I/O only it
 * can run. While a pool's connections are all out, borrowers wait in line for one, and the coroutine
 * that gives one back hands it to the first in line ({@link LoopGate}).
 *
 * <p>It is a {@link HikariDataSource} made from the configuration of one (its getters report that
 * configuration), so code and tools that expect Hikari keep working: the pool size is the total,
 * split over the loops (each at least 1); metrics trackers set on it reach every pool, and each pool
 * reports under its own name, {@code <pool name>-loop<i>}; {@link #getHikariPoolMXBean()} sums them.
 * The pools start on first use; the IOManager must be running by then.
 *
 * <p>A coroutine interrupted while it holds a connection (its request was cancelled or timed out) is not
 * interrupted in the middle of a statement, which would break the connection: the interrupt waits until
 * the connection is back in its pool, and a statement that runs on for {@code cancelStatementsAfter} is
 * cancelled on the server ({@link BorrowedConnection}).
 */
public class LoopBoundDataSource extends HikariDataSource {

    private final IOManager io;
    private final Database database;
    private final String name;
    private final HikariDataSource @Nullable [] pools; // null only during HikariConfig's constructor
    private final LoopGate[] gates;
    private final StatementCanceller canceller;

    /** How long a statement may run on after its coroutine was interrupted before it is cancelled, by default. */
    public static final Duration DEFAULT_CANCEL_STATEMENTS_AFTER = Duration.ofSeconds(1);

    /**
     * @param template a PostgreSQL, MariaDB or MySQL pool configuration with a {@code jdbcUrl}: what each
     *                 loop's pool is made from
     * @param io       the IOManager whose loops carry the connections; it must be running when the first
     *                 connection is asked for (the owner of the IOManager starts it, this data source does not)
     * @throws IllegalArgumentException if {@code template} has no {@code jdbc:postgresql:}, {@code jdbc:mariadb:}
     *         or {@code jdbc:mysql:} URL, or already names a socket factory (see {@link #unsupportedReason})
     */
    public LoopBoundDataSource(HikariConfig template, IOManager io) {
        this(template, io, DEFAULT_CANCEL_STATEMENTS_AFTER);
    }

    /**
     * @param template              a PostgreSQL, MariaDB or MySQL pool configuration with a {@code jdbcUrl}: what
     *                              each loop's pool is made from
     * @param io                    the IOManager whose loops carry the connections
     * @param cancelStatementsAfter how long a statement may run on after its coroutine was interrupted before
     *                              it is cancelled on the server ({@code >= 0})
     * @throws IllegalArgumentException if {@code template} has no {@code jdbc:postgresql:}, {@code jdbc:mariadb:}
     *         or {@code jdbc:mysql:} URL, or already names a socket factory (see {@link #unsupportedReason}), or
     *         {@code cancelStatementsAfter} is negative
     */
    public LoopBoundDataSource(HikariConfig template, IOManager io, Duration cancelStatementsAfter) {
        String reason = unsupportedReason(template);
        if (reason != null) {
            throw new IllegalArgumentException("template: " + reason);
        }
        template.copyStateTo(this);
        this.io = io;
        this.database =
                java.util.Objects.requireNonNull(Database.of(template.getJdbcUrl(), template.getDriverClassName()));
        this.canceller = new StatementCanceller(
                io,
                Arguments.nonNegative("cancelStatementsAfter", cancelStatementsAfter),
                c -> database.cancel(c, this));
        int loops = io.threads();
        int total = template.getMaximumPoolSize();
        String base = template.getPoolName() != null ? template.getPoolName() : "HikariPool";
        this.name = base;
        HikariDataSource[] pools = new HikariDataSource[loops];
        this.gates = new LoopGate[loops];
        for (int i = 0; i < loops; i++) {
            HikariDataSource pool = new HikariDataSource();
            template.copyStateTo(pool);
            pool.setPoolName(base + "-loop" + i);
            database.bind(pool, template, io, i);
            pool.setMaximumPoolSize(share(total, loops, i));
            if (template.getMinimumIdle() >= 0) {
                pool.setMinimumIdle(Math.min(share(template.getMinimumIdle(), loops, i), pool.getMaximumPoolSize()));
            }
            gates[i] = new LoopGate(pool.getMaximumPoolSize(), () -> describe(pool));
            pools[i] = pool;
        }
        this.pools = pools;
    }

    private static String describe(HikariDataSource pool) {
        HikariPoolMXBean p = pool.getHikariPoolMXBean();
        return pool.getPoolName() + " ("
                + (p == null
                        ? "not started"
                        : "total=" + p.getTotalConnections() + ", active=" + p.getActiveConnections() + ", idle="
                                + p.getIdleConnections())
                + ")";
    }

    /**
     * Why {@code config} cannot be bound to the loops, or {@code null} when it can: a
     * {@code jdbc:postgresql:}, {@code jdbc:mariadb:} or {@code jdbc:mysql:} URL (with MariaDB's driver, if
     * named, a {@code jdbc:mysql:} URL is MariaDB's), whose driver is on the class path, no data source
     * class or instance, no socket factory of its own.
     */
    public static @Nullable String unsupportedReason(HikariConfig config) {
        String url = config.getJdbcUrl();
        if (config.getDataSource() != null || config.getDataSourceClassName() != null) {
            return "it is configured with a DataSource (class) instead of a JDBC URL";
        }
        Database database = Database.of(url, config.getDriverClassName());
        if (database == null) {
            return "its JDBC URL '" + url + "'"
                    + (config.getDriverClassName() == null ? "" : " with driver " + config.getDriverClassName())
                    + " is none of PostgreSQL's (jdbc:postgresql:), MariaDB's "
                    + "(jdbc:mariadb:) or MySQL's (jdbc:mysql:)";
        }
        if (!onClassPath(database.driverClassName())) {
            return "its driver, " + database.driverClassName() + ", is not on the class path";
        }
        if (Database.namesSocketFactory(config)) {
            return "it names a socket factory of its own";
        }
        return null;
    }

    private static boolean onClassPath(String className) {
        try {
            Class.forName(className, false, LoopBoundDataSource.class.getClassLoader());
            return true;
        } catch (ClassNotFoundException | LinkageError e) {
            return false;
        }
    }

    /** The {@code i}-th of {@code n} parts of {@code total}, the first ones one larger; at least 1. */
    static int share(int total, int n, int i) {
        return Math.max(1, total / n + (i < total % n ? 1 : 0));
    }

    /** The pool of the caller's loop: for a connection outside the borrow protocol (MySQL's cancel). */
    HikariDataSource poolOfCaller() throws SQLException {
        return poolsOrNone()[loopIndex()];
    }

    /**
     * Interrupts of borrowing coroutines held back until their connection was back in its pool (each one a
     * connection an interrupted read would have broken).
     */
    public long interruptsDeferred() {
        return canceller.deferredInterrupts();
    }

    /** Statements cancelled on the server because they ran on past their coroutine's interrupt. */
    public long statementsCancelled() {
        return canceller.cancelledStatements();
    }

    /** The name the loops' pools share: theirs are {@code <name>-loop<i>}; the configured pool name, else {@code HikariPool}. */
    public String sharedPoolName() {
        return name;
    }

    /** The pool of each loop, in loop order. */
    public List<HikariDataSource> pools() {
        return List.of(poolsOrNone());
    }

    /**
     * A connection of the pool of the caller's loop ({@link IOManager#loopIndexForCaller()}). While all of
     * its connections are out, the caller waits in line for one (up to the connection timeout), and
     * the coroutine that gives one back hands it over.
     *
     * <p>A caller that is interrupted (its request was cancelled) gets no connection: an interrupted
     * read would break it. It is refused with a {@link CancellationException}, before it borrows or
     * while it waits in line, and its interrupt status stays set. Unchecked, unlike HikariCP's own
     * "Interrupted during connection acquisition", because it is no database error: ORMs log every
     * {@link SQLException} at WARN, and a client that went away is not worth a log line.
     *
     * @throws CancellationException when the calling thread is interrupted
     */
    @Override
    public Connection getConnection() throws SQLException {
        if (isClosed()) {
            throw new SQLException("LoopBoundDataSource " + this + " has been closed.");
        }
        int i = loopIndex();
        HikariDataSource pool = poolsOrNone()[i];
        LoopGate gate = gates[i];
        if (Thread.currentThread().isInterrupted()) {
            throw gate.cancelled();
        }
        long started = System.nanoTime();
        Duration timeout = Duration.ofMillis(pool.getConnectionTimeout());
        gate.enter(timeout);
        // Shielded from here: HikariCP may check an idle connection (a query) before it hands it out.
        BorrowedConnection borrow = new BorrowedConnection(pool, gate, canceller);
        if (Thread.currentThread().isInterrupted()) {
            // interrupted between the check above and the shield (while the turn was handed over, say): from here
            // on an interrupt would wait for the shield, but this one is set already and would break the connection
            borrow.abandon();
            throw gate.cancelled();
        }
        try {
            Connection c;
            if (pool.getHikariPoolMXBean() instanceof HikariPool running) {
                long left = timeout.toMillis()
                        - Duration.ofNanos(System.nanoTime() - started).toMillis();
                c = running.getConnection(Math.max(1, left)); // what the wait in line left of the timeout
            } else {
                // only before the pool runs: IOManager.state() looks at every carrier, too much for every query
                SchedulerStats.State state = io.state();
                if (state != SchedulerStats.State.RUNNING) {
                    throw new SQLException(
                            "IOManager '" + io.name() + "' is " + state + " (expected: RUNNING): the "
                                    + "connections of data source '" + name
                                    + "' live on its loops; start it before the first query",
                            "08001");
                }
                c = pool.getConnection(); // starts the pool
            }
            return borrow.lend(c);
        } catch (SQLException | RuntimeException e) {
            borrow.abandon(); // no connection came of this turn
            throw e;
        }
    }

    @Override
    public Connection getConnection(String username, String password) throws SQLException {
        throw new SQLFeatureNotSupportedException();
    }

    private int loopIndex() throws SQLException {
        try {
            return io.loopIndexForCaller();
        } catch (IllegalStateException e) {
            throw new SQLException(e.getMessage(), "08001", e);
        }
    }

    @Override
    public void close() {
        if (isClosed()) {
            return;
        }
        super.close();
        for (HikariDataSource pool : poolsOrNone()) {
            pool.close();
        }
    }

    @Override
    public boolean isRunning() {
        for (HikariDataSource pool : poolsOrNone()) {
            if (pool.isRunning()) {
                return true;
            }
        }
        return false;
    }

    /**
     * Evicts {@code connection} from the pool of the loop it came from, whichever thread asks: at once while it
     * is lent (its close then returns nothing), else when it next comes back. A connection this data source did
     * not lend belongs to none of its pools and is left alone, as HikariCP leaves one it did not make.
     */
    @Override
    public void evictConnection(Connection connection) {
        if (connection instanceof BorrowedConnection borrowed) {
            borrowed.evict();
        }
    }

    /** The loops' pools report to {@code metricsTrackerFactory}, each under its own name. */
    @Override
    public void setMetricsTrackerFactory(MetricsTrackerFactory metricsTrackerFactory) {
        super.setMetricsTrackerFactory(metricsTrackerFactory);
        for (HikariDataSource pool : poolsOrNone()) {
            pool.setMetricsTrackerFactory(metricsTrackerFactory);
        }
    }

    /** The loops' pools report to {@code metricRegistry}, each under its own name. */
    @Override
    public void setMetricRegistry(Object metricRegistry) {
        super.setMetricRegistry(metricRegistry);
        for (HikariDataSource pool : poolsOrNone()) {
            pool.setMetricRegistry(metricRegistry);
        }
    }

    @Override
    public void setHealthCheckRegistry(Object healthCheckRegistry) {
        super.setHealthCheckRegistry(healthCheckRegistry);
        for (HikariDataSource pool : poolsOrNone()) {
            pool.setHealthCheckRegistry(healthCheckRegistry);
        }
    }

    /** The pools; none while HikariConfig's constructor runs (it may call setters, from a configuration file). */
    private HikariDataSource[] poolsOrNone() {
        return pools == null ? new HikariDataSource[0] : pools;
    }

    /** The sum over the loops' pools (a pool not started yet counts as empty). */
    @Override
    public HikariPoolMXBean getHikariPoolMXBean() {
        return new Totals();
    }

    private final class Totals implements HikariPoolMXBean {

        private List<HikariPoolMXBean> started() {
            List<HikariPoolMXBean> beans = new ArrayList<>();
            for (HikariDataSource pool : poolsOrNone()) {
                HikariPoolMXBean bean = pool.getHikariPoolMXBean();
                if (bean != null) {
                    beans.add(bean);
                }
            }
            return beans;
        }

        @Override
        public int getIdleConnections() {
            return started().stream()
                    .mapToInt(HikariPoolMXBean::getIdleConnections)
                    .sum();
        }

        @Override
        public int getActiveConnections() {
            return started().stream()
                    .mapToInt(HikariPoolMXBean::getActiveConnections)
                    .sum();
        }

        @Override
        public int getTotalConnections() {
            return started().stream()
                    .mapToInt(HikariPoolMXBean::getTotalConnections)
                    .sum();
        }

        @Override
        public int getThreadsAwaitingConnection() {
            return started().stream()
                    .mapToInt(HikariPoolMXBean::getThreadsAwaitingConnection)
                    .sum();
        }

        @Override
        public void softEvictConnections() {
            started().forEach(HikariPoolMXBean::softEvictConnections);
        }

        @Override
        public void suspendPool() {
            started().forEach(HikariPoolMXBean::suspendPool);
        }

        @Override
        public void resumePool() {
            started().forEach(HikariPoolMXBean::resumePool);
        }
    }

    @Override
    public String toString() {
        return "LoopBoundDataSource (" + name + ", " + poolsOrNone().length + " pools on " + io.name() + ")";
    }
}
