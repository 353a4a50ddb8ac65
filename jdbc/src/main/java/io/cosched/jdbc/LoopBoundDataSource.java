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
import java.util.concurrent.atomic.AtomicBoolean;
import org.jspecify.annotations.Nullable;

/**
 * A HikariCP {@code DataSource} for PostgreSQL, MariaDB or MySQL whose connections live on an
 * IOManager's event loops: behind it one Hikari pool per loop, each opening its connections on its
 * loop through {@link LoopSocketFactory} (the PostgreSQL driver's socket factory;
 * {@link MariaDbLoopSockets} and {@link MySqlLoopSockets} adapt it to MariaDB Connector/J and MySQL
 * Connector/J). {@link #getConnection()} hands a coroutine a connection of its own loop
 * (connections never migrate), so the loop that reads the answer to a query is the
 * thread that resumes the coroutine. Any other thread gets one of the least loaded loop; a loop
 * thread itself, outside any coroutine, is refused with an {@code SQLException} saying why (it would
 * hold its loop while it waited; see {@link IOManager#loopIndexForCaller()}). While a connection pool's connections are all out, borrowers wait in line for one, and the coroutine
 * that gives one back hands it to the first in line ({@link LoopGate}).
 *
 * <p>It is a {@link HikariDataSource} made from the configuration of one (its getters report that
 * configuration), so code and tools that expect Hikari keep working: the connection pool size is the total,
 * split over the loops (each at least 1); metrics trackers set on it reach every connection pool, and each connection pool
 * reports under its own name, {@code <pool name>-loop<i>}; {@link #getHikariPoolMXBean()} sums them.
 * The connection pools start on first use; the IOManager must be running by then.
 *
 * <p>A coroutine interrupted while it holds a connection (its request was cancelled or timed out) is not
 * interrupted in the middle of a statement, which would break the connection: the interrupt waits until
 * the connection is back in its connection pool, and a statement that runs on for {@code cancelStatementsAfter} is
 * cancelled on the server ({@link BorrowedConnection}).
 */
public class LoopBoundDataSource extends HikariDataSource {

    private static final System.Logger LOG = System.getLogger(LoopBoundDataSource.class.getName());

    private final IOManager io;
    private final Database database;
    private final String name;
    private final LoopPool @Nullable [] loops; // null only during HikariConfig's constructor
    private final StatementCanceller canceller;
    private final AtomicBoolean serverLimitChecked = new AtomicBoolean();

    /** How long a statement may run on after its coroutine was interrupted before it is cancelled, by default. */
    public static final Duration DEFAULT_CANCEL_STATEMENTS_AFTER = Duration.ofSeconds(1);

    /**
     * @param template a PostgreSQL, MariaDB or MySQL connection pool configuration with a {@code jdbcUrl}: what each
     *                 loop's connection pool is made from
     * @param io       the IOManager whose loops carry the connections; it must be running when the first
     *                 connection is asked for (the owner of the IOManager starts it, this data source does not)
     * @throws IllegalArgumentException if {@code template} has no {@code jdbc:postgresql:}, {@code jdbc:mariadb:}
     *         or {@code jdbc:mysql:} URL, or already names a socket factory (see {@link #unsupportedReason})
     */
    public LoopBoundDataSource(HikariConfig template, IOManager io) {
        this(template, io, DEFAULT_CANCEL_STATEMENTS_AFTER);
    }

    /**
     * @param template              a PostgreSQL, MariaDB or MySQL connection pool configuration with a {@code jdbcUrl}: what
     *                              each loop's connection pool is made from
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
        int n = io.threads();
        int total = template.getMaximumPoolSize();
        String base = template.getPoolName() != null ? template.getPoolName() : "HikariPool";
        this.name = base;
        MetricsTrackerFactory applicationTrackers = template.getMetricsTrackerFactory() != null
                ? template.getMetricsTrackerFactory()
                : trackersFor(template.getMetricRegistry());
        LoopPool[] loops = new LoopPool[n];
        for (int i = 0; i < n; i++) {
            HikariDataSource pool = new HikariDataSource();
            template.copyStateTo(pool);
            pool.setPoolName(base + "-loop" + i);
            database.bind(pool, template, io, i);
            pool.setMaximumPoolSize(share(total, n, i));
            if (template.getMinimumIdle() >= 0) {
                pool.setMinimumIdle(Math.min(share(template.getMinimumIdle(), n, i), pool.getMaximumPoolSize()));
            }
            loops[i] = new LoopPool(pool, applicationTrackers);
        }
        this.loops = loops;
        logSizes(total, loops);
    }

    /** Says once how the configured size was split over the loops, and warns where a loop's share is too small. */
    private void logSizes(int configured, LoopPool[] loops) {
        int smallest = Integer.MAX_VALUE;
        int largest = 0;
        for (LoopPool loop : loops) {
            smallest = Math.min(smallest, loop.hikari().getMaximumPoolSize());
            largest = Math.max(largest, loop.hikari().getMaximumPoolSize());
        }
        int total = connections();
        LOG.log(
                System.Logger.Level.INFO,
                name + ": maximumPoolSize " + configured + " is the total over " + loops.length + " loops: "
                        + (smallest == largest ? smallest : smallest + " to " + largest) + " connection"
                        + (largest == 1 ? "" : "s") + " per loop ("
                        + name + "-loop0" + (loops.length > 1 ? " to " + name + "-loop" + (loops.length - 1) : "")
                        + (total > configured ? "; " + total + " in all, since every loop gets at least one" : "")
                        + ")");
        if (smallest < 2) {
            LOG.log(
                    System.Logger.Level.WARNING,
                    name + ": a loop's connection pool has " + smallest + " connection (maximumPoolSize " + configured
                            + " over " + loops.length + " loops): a coroutine that holds it and asks for a "
                            + "second (REQUIRES_NEW, a query while a stream is open) waits for itself until the "
                            + "connection timeout; set maximumPoolSize to at least " + 2 * loops.length
                            + " (2 per loop)");
        }
    }

    /** The connections of all loops' connection pools together, as configured. */
    private int connections() {
        int total = 0;
        for (LoopPool loop : loopsOrNone()) {
            total += loop.hikari().getMaximumPoolSize();
        }
        return total;
    }

    /**
     * The factory HikariCP makes of a metric registry ({@code setMetricRegistry}): Dropwizard's (4 or 5) or
     * Micrometer's, which the application brings; {@code null} for none.
     */
    private static @Nullable MetricsTrackerFactory trackersFor(@Nullable Object registry) {
        if (registry == null) {
            return null;
        }
        for (String[] kind : new String[][] {
            {"com.codahale.metrics.MetricRegistry", "com.zaxxer.hikari.metrics.dropwizard.CodahaleMetricsTrackerFactory"
            },
            {
                "io.dropwizard.metrics5.MetricRegistry",
                "com.zaxxer.hikari.metrics.dropwizard.Dropwizard5MetricsTrackerFactory"
            },
            {
                "io.micrometer.core.instrument.MeterRegistry",
                "com.zaxxer.hikari.metrics.micrometer.MicrometerMetricsTrackerFactory"
            }
        }) {
            try {
                ClassLoader loader = registry.getClass().getClassLoader();
                Class<?> type = Class.forName(kind[0], false, loader);
                if (type.isInstance(registry)) {
                    return (MetricsTrackerFactory) Class.forName(kind[1], true, HikariDataSource.class.getClassLoader())
                            .getConstructor(type)
                            .newInstance(registry);
                }
            } catch (ClassNotFoundException e) {
                // not that kind of registry
            } catch (ReflectiveOperationException | LinkageError e) {
                throw new IllegalArgumentException(
                        "metricRegistry: " + registry + " (expected: a registry HikariCP can report to: " + e + ")", e);
            }
        }
        throw new IllegalArgumentException("metricRegistry: " + registry + " (expected: a Dropwizard MetricRegistry "
                + "or a Micrometer MeterRegistry, as HikariCP takes)");
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

    /** The connection pool of the caller's loop: for a connection outside the borrow protocol (MySQL's cancel). */
    HikariDataSource poolOfCaller() throws SQLException {
        return loopsOrNone()[loopIndex()].hikari();
    }

    /**
     * Interrupts of borrowing coroutines held back until their connection was back in its connection pool (each one a
     * connection an interrupted read would have broken).
     */
    public long interruptsDeferred() {
        return canceller.deferredInterrupts();
    }

    /** Statements cancelled on the server because they ran on past their coroutine's interrupt. */
    public long statementsCancelled() {
        return canceller.cancelledStatements();
    }

    /** The name the loops' connection pools share: theirs are {@code <name>-loop<i>}; the configured connection pool name, else {@code HikariPool}. */
    public String sharedPoolName() {
        return name;
    }

    /** The connection pool of each loop, in loop order. */
    public List<HikariDataSource> pools() {
        List<HikariDataSource> pools = new ArrayList<>();
        for (LoopPool loop : loopsOrNone()) {
            pools.add(loop.hikari());
        }
        return pools;
    }

    /**
     * The line of borrowers in front of one loop's connection pool: its name and size, how many borrowers hold one of its
     * connections ({@code lent}) and how many wait in line for one.
     */
    public record Line(String pool, int size, int lent, int waiting) {}

    /** The line in front of each loop's connection pool, in loop order. */
    public List<Line> lines() {
        List<Line> lines = new ArrayList<>();
        for (LoopPool loop : loopsOrNone()) {
            lines.add(new Line(
                    loop.hikari().getPoolName(),
                    loop.hikari().getMaximumPoolSize(),
                    loop.gate().taken(),
                    loop.gate().waiting()));
        }
        return lines;
    }

    /**
     * A connection of the connection pool of the caller's loop ({@link IOManager#loopIndexForCaller()}). While all of
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
        LoopPool loop = loopsOrNone()[loopIndex()];
        HikariDataSource pool = loop.hikari();
        LoopGate gate = loop.gate();
        if (Thread.currentThread().isInterrupted()) {
            throw gate.cancelled();
        }
        long started = System.nanoTime();
        Duration timeout = Duration.ofMillis(pool.getConnectionTimeout());
        gate.enter(timeout);
        // Shielded from here: HikariCP may check an idle connection (a query) before it hands it out.
        BorrowedConnection borrow = new BorrowedConnection(loop, canceller);
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
                // only before the connection pool runs: IOManager.state() looks at every carrier, too much for every
                // query
                SchedulerStats.State state = io.state();
                if (state != SchedulerStats.State.RUNNING) {
                    throw new SQLException(
                            "IOManager '" + io.name() + "' is " + state + " (expected: RUNNING): the "
                                    + "connections of data source '" + name
                                    + "' live on its loops; start it before the first query",
                            "08001");
                }
                c = pool.getConnection(); // starts the connection pool
            }
            if (!serverLimitChecked.get() && serverLimitChecked.compareAndSet(false, true)) {
                checkServerMaxConnections(c);
            }
            return borrow.lend(c);
        } catch (SQLException | RuntimeException e) {
            borrow.abandon(); // no connection came of this turn
            throw e;
        }
    }

    /** Warns once when the connection pools may open more connections than the server takes. */
    private void checkServerMaxConnections(Connection c) {
        int maxConnections;
        try {
            maxConnections = database.maxConnections(c);
        } catch (SQLException | RuntimeException e) {
            // only a warning was at stake: the borrower gets its connection all the same
            LOG.log(System.Logger.Level.DEBUG, name + ": could not read the server's max_connections", e);
            return;
        }
        int total = connections();
        if (total > maxConnections) {
            LOG.log(
                    System.Logger.Level.WARNING,
                    name + ": its connection pools may open " + total + " connections over " + loopsOrNone().length
                            + " loops, but the database takes " + maxConnections
                            + " in all (max_connections): connections "
                            + "past that fail to open, and every other client and instance shares that maximum");
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
        for (LoopPool loop : loopsOrNone()) {
            loop.hikari().close();
        }
    }

    @Override
    public boolean isRunning() {
        for (LoopPool loop : loopsOrNone()) {
            if (loop.hikari().isRunning()) {
                return true;
            }
        }
        return false;
    }

    /**
     * Evicts {@code connection} from the connection pool of the loop it came from, whichever thread asks: at once while it
     * is lent (its close then returns nothing), else when it next comes back. The connection may be the borrowed one
     * or HikariCP's that its statements answer {@code getConnection()} with. A connection this data source did not
     * lend belongs to none of its connection pools and is left alone, as HikariCP leaves one it did not make.
     */
    @Override
    public void evictConnection(Connection connection) {
        if (connection instanceof BorrowedConnection borrowed) {
            borrowed.evict();
            return;
        }
        for (LoopPool loop : loopsOrNone()) {
            BorrowedConnection borrowed = loop.borrowOf(connection);
            if (borrowed != null) {
                borrowed.evict();
                return;
            }
        }
    }

    /**
     * The loops' connection pools report to {@code metricsTrackerFactory}, each under its own name, with the borrowers waiting
     * in line counted as pending ({@code hikaricp.connections.pending}).
     */
    @Override
    public void setMetricsTrackerFactory(@Nullable MetricsTrackerFactory metricsTrackerFactory) {
        super.setMetricsTrackerFactory(metricsTrackerFactory);
        for (LoopPool loop : loopsOrNone()) {
            loop.applicationTrackers(metricsTrackerFactory);
        }
    }

    /**
     * The loops' connection pools report to {@code metricRegistry} (Dropwizard's or Micrometer's), each under its own name, with
     * the borrowers waiting in line counted as pending.
     */
    @Override
    public void setMetricRegistry(@Nullable Object metricRegistry) {
        super.setMetricRegistry(metricRegistry);
        MetricsTrackerFactory trackers = trackersFor(metricRegistry);
        for (LoopPool loop : loopsOrNone()) {
            loop.applicationTrackers(trackers);
        }
    }

    @Override
    public void setHealthCheckRegistry(Object healthCheckRegistry) {
        super.setHealthCheckRegistry(healthCheckRegistry);
        for (LoopPool loop : loopsOrNone()) {
            loop.hikari().setHealthCheckRegistry(healthCheckRegistry);
        }
    }

    /** The loops' connection pools; none while HikariConfig's constructor runs (it may call setters, from a configuration file). */
    private LoopPool[] loopsOrNone() {
        return loops == null ? new LoopPool[0] : loops;
    }

    /** The sum over the loops' connection pools (a connection pool not started yet counts as empty). */
    @Override
    public HikariPoolMXBean getHikariPoolMXBean() {
        return new Totals();
    }

    private final class Totals implements HikariPoolMXBean {

        private List<HikariPoolMXBean> started() {
            List<HikariPoolMXBean> beans = new ArrayList<>();
            for (LoopPool loop : loopsOrNone()) {
                HikariPoolMXBean bean = loop.hikari().getHikariPoolMXBean();
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

        /** Those waiting inside HikariCP and those waiting in the loops' lines in front of it. */
        @Override
        public int getThreadsAwaitingConnection() {
            int inLine = 0;
            for (LoopPool loop : loopsOrNone()) {
                inLine += loop.gate().waiting();
            }
            return inLine
                    + started().stream()
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
        return "LoopBoundDataSource (" + name + ", " + loopsOrNone().length + " connection pools on " + io.name() + ")";
    }
}
