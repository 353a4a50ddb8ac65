package io.cosched.jdbc;

import static io.cosched.TestSupport.eventually;
import static io.cosched.jdbc.RealDatabase.POSTGRESQL;
import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.metrics.IMetricsTracker;
import com.zaxxer.hikari.metrics.MetricsTrackerFactory;
import com.zaxxer.hikari.metrics.PoolStats;
import io.cosched.Coroutines;
import io.cosched.IOManager;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every way a lent connection goes back to HikariCP hands its borrow's turn on to the loop's next borrower and lets
 * the borrower's interrupt through: the borrow's own close, and closes of HikariCP's connection that the borrow never
 * sees (what statements, result sets and metadata answer {@code getConnection()} with), with the connection recycled
 * or dropped. Against the real servers, one connection per loop: a turn lost would leave the next borrower waiting
 * for a connection that is idle.
 */
@Timeout(60)
class WaysBackTest {

    private static final long WAIT_SECONDS = 20;

    private IOManager io;
    private LoopBoundDataSource ds;

    @BeforeEach
    void start() {
        io = RealDatabase.twoLoops("waysback-io");
    }

    @AfterEach
    void stop() {
        if (ds != null) {
            ds.close();
        }
        io.stop(Duration.ofSeconds(10));
    }

    private LoopBoundDataSource dataSource(RealDatabase db, java.util.function.Consumer<HikariConfig> more) {
        db.assumeConfigured();
        HikariConfig config = db.config("waysback", io.threads()); // one connection per loop
        config.setConnectionTimeout(5_000);
        more.accept(config);
        ds = new LoopBoundDataSource(config, io);
        return ds;
    }

    /** A way a borrower gives its connection back; {@code replaced}: the pool drops the connection and opens another. */
    enum WayBack {
        BORROWS_OWN_CLOSE(false) {
            @Override
            void giveBack(Connection c, LoopBoundDataSource ds, RealDatabase db) throws Exception {
                c.close();
            }
        },
        UNWRAPPED_CONNECTION(false) {
            @Override
            void giveBack(Connection c, LoopBoundDataSource ds, RealDatabase db) throws Exception {
                c.unwrap(Connection.class).close();
            }
        },
        STATEMENT(false) {
            @Override
            void giveBack(Connection c, LoopBoundDataSource ds, RealDatabase db) throws Exception {
                c.createStatement().getConnection().close(); // the statement is closed with the connection
            }
        },
        PREPARED_STATEMENT(false) {
            @Override
            void giveBack(Connection c, LoopBoundDataSource ds, RealDatabase db) throws Exception {
                c.prepareStatement("SELECT 1").getConnection().close();
            }
        },
        RESULT_SET(false) {
            @Override
            void giveBack(Connection c, LoopBoundDataSource ds, RealDatabase db) throws Exception {
                ResultSet rs = c.createStatement().executeQuery("SELECT 1");
                rs.next();
                rs.getStatement().getConnection().close();
            }
        },
        METADATA(false) {
            @Override
            void giveBack(Connection c, LoopBoundDataSource ds, RealDatabase db) throws Exception {
                c.getMetaData().getConnection().close();
            }
        },
        /** Evicted through HikariCP's connection, then closed through it: HikariCP drops it and recycles nothing. */
        EVICTED_THROUGH_STATEMENT(true) {
            @Override
            void giveBack(Connection c, LoopBoundDataSource ds, RealDatabase db) throws Exception {
                Connection hikari = c.createStatement().getConnection();
                ds.evictConnection(hikari);
                hikari.close();
            }
        };

        final boolean replaced;

        WayBack(boolean replaced) {
            this.replaced = replaced;
        }

        abstract void giveBack(Connection c, LoopBoundDataSource ds, RealDatabase db) throws Exception;
    }

    static Stream<Arguments> everyDatabaseEveryWay() {
        List<Arguments> cases = new ArrayList<>();
        for (RealDatabase db : RealDatabase.values()) {
            for (WayBack way : WayBack.values()) {
                cases.add(Arguments.of(db, way));
            }
        }
        return cases.stream();
    }

    @ParameterizedTest(name = "{0}, {1}")
    @MethodSource("everyDatabaseEveryWay")
    void theNextBorrowerGetsTheConnectionAndNoTurnStaysOut(RealDatabase db, WayBack way) throws Exception {
        dataSource(db, c -> {});
        long first = io.spawnOn(0, () -> {
                    Connection c = ds.getConnection();
                    long id = db.idOf(c);
                    way.giveBack(c, ds, db);
                    return id;
                })
                .toFuture()
                .get(WAIT_SECONDS, TimeUnit.SECONDS);
        // a recycled connection's turn is back as HikariCP takes the connection; a dropped one's when the next
        // borrower finds the line full
        assertThat(ds.lines().get(0).lent()).as("turns out").isEqualTo(way.replaced ? 1 : 0);
        long next = sessionOfNextBorrower(db);
        if (way.replaced) {
            assertThat(next).as("a new connection for the one dropped").isNotEqualTo(first);
        } else {
            assertThat(next).as("the connection given back").isEqualTo(first);
        }
        assertThat(ds.lines().get(0)).isEqualTo(new LoopBoundDataSource.Line("waysback-loop0", 1, 0, 0));
        assertThat(ds.pools().get(0).getHikariPoolMXBean().getActiveConnections())
                .isZero();
    }

    private long sessionOfNextBorrower(RealDatabase db) throws Exception {
        return io.spawnOn(0, () -> {
                    try (Connection c = ds.getConnection()) {
                        return db.idOf(c);
                    }
                })
                .toFuture()
                .get(WAIT_SECONDS, TimeUnit.SECONDS);
    }

    /** A connection HikariCP found broken is dropped without being recycled; its statement's close changes nothing. */
    @Test
    void aBrokenConnectionClosedThroughItsStatementIsReplacedAndItsTurnHandedOn() throws Exception {
        dataSource(POSTGRESQL, c -> {});
        try (Connection admin = POSTGRESQL.admin()) {
            String failure = io.spawnOn(0, () -> {
                        Connection c = ds.getConnection();
                        Statement s = c.createStatement();
                        try (Statement kill = admin.createStatement()) {
                            kill.execute(POSTGRESQL.terminate(POSTGRESQL.idOf(c)));
                        }
                        try {
                            s.executeQuery("SELECT 1");
                            return "answered";
                        } catch (SQLException e) {
                            return "failed";
                        } finally {
                            s.getConnection().close();
                        }
                    })
                    .toFuture()
                    .get(WAIT_SECONDS, TimeUnit.SECONDS);
            assertThat(failure).isEqualTo("failed");
        }
        assertThat(sessionOfNextBorrower(POSTGRESQL)).isPositive();
        assertThat(ds.lines().get(0).lent()).isZero();
    }

    @ParameterizedTest
    @EnumSource(WayBack.class)
    void aBorrowerWhoseConnectionWentBackIsInterruptedAtOnce(WayBack way) throws Exception {
        dataSource(POSTGRESQL, c -> {});
        String outcome = io.spawnOn(0, () -> {
                    Connection c = ds.getConnection();
                    way.giveBack(c, ds, POSTGRESQL);
                    Coroutines.current().orElseThrow().interrupt();
                    return "interrupted at once " + Thread.interrupted();
                })
                .toFuture()
                .get(WAIT_SECONDS, TimeUnit.SECONDS);
        assertThat(outcome).isEqualTo("interrupted at once true");
        assertThat(ds.lines().get(0).lent()).isZero();
    }

    @Test
    void theBorrowedConnectionEqualsHikarisConnectionThatItsStatementsHandOut() throws Exception {
        dataSource(POSTGRESQL, c -> {});
        String outcome = io.spawnOn(0, () -> {
                    try (Connection c = ds.getConnection();
                            Statement s = c.createStatement()) {
                        Connection hikari = s.getConnection();
                        return "equal " + c.equals(hikari) + ", same hash " + (c.hashCode() == hikari.hashCode())
                                + ", itself " + c.equals(c) + ", a metadata's "
                                + c.equals(c.getMetaData().getConnection());
                    }
                })
                .toFuture()
                .get(WAIT_SECONDS, TimeUnit.SECONDS);
        assertThat(outcome).isEqualTo("equal true, same hash true, itself true, a metadata's true");
    }

    @Test
    void aConnectionOfAnotherLoopIsNotEqualToIt() throws Exception {
        dataSource(POSTGRESQL, c -> {});
        Connection other = io.spawnOn(1, () -> {
                    Connection c = ds.getConnection();
                    Connection hikari = c.createStatement().getConnection();
                    c.close();
                    return hikari;
                })
                .toFuture()
                .get(WAIT_SECONDS, TimeUnit.SECONDS);
        boolean equal = io.spawnOn(0, () -> {
                    try (Connection c = ds.getConnection()) {
                        return c.equals(other);
                    }
                })
                .toFuture()
                .get(WAIT_SECONDS, TimeUnit.SECONDS);
        assertThat(equal).isFalse();
    }

    /**
     * The application's HikariCP metrics see each loop's pool, with the borrowers waiting in line as pending
     * ({@code hikaricp.connections.pending} in Micrometer), and every connection's use, however it went back.
     */
    @Test
    void theApplicationsMetricsCountTheLineAsPendingAndSeeEveryReturn() throws Exception {
        AtomicReference<PoolStats> loop0 = new AtomicReference<>();
        AtomicInteger uses = new AtomicInteger();
        MetricsTrackerFactory application = (poolName, stats) -> {
            if (poolName.endsWith("-loop0")) {
                loop0.set(stats);
            }
            return new IMetricsTracker() {
                @Override
                public void recordConnectionUsageMillis(long elapsedBorrowedMillis) {
                    uses.incrementAndGet();
                }
            };
        };
        dataSource(POSTGRESQL, c -> c.setMetricsTrackerFactory(application));
        Borrower holder = Borrower.on(io, 0, ds, POSTGRESQL);
        holder.sessionId();
        Borrower waiter = Borrower.on(io, 0, ds, POSTGRESQL).awaitParked();
        // HikariCP's stats are read at most once a second
        eventually(
                Duration.ofSeconds(5),
                () -> loop0.get().getPendingThreads() == 1,
                () -> "pending: " + loop0.get().getPendingThreads());
        assertThat(ds.getHikariPoolMXBean().getThreadsAwaitingConnection()).isEqualTo(1);
        holder.releaseAndJoin();
        waiter.releaseAndJoin();
        io.spawnOn(0, () -> {
                    WayBack.STATEMENT.giveBack(ds.getConnection(), ds, POSTGRESQL);
                    return null;
                })
                .toFuture()
                .get(WAIT_SECONDS, TimeUnit.SECONDS);
        assertThat(uses.get()).isEqualTo(3);
    }

    @Test
    void aMetricsTrackerFactorySetAfterThePoolsStartedReceivesFromThen() throws Exception {
        dataSource(POSTGRESQL, c -> {});
        sessionOfNextBorrower(POSTGRESQL); // starts loop 0's pool
        AtomicInteger uses = new AtomicInteger();
        ds.setMetricsTrackerFactory((poolName, stats) -> new IMetricsTracker() {
            @Override
            public void recordConnectionUsageMillis(long elapsedBorrowedMillis) {
                uses.incrementAndGet();
            }
        });
        sessionOfNextBorrower(POSTGRESQL);
        assertThat(uses.get()).isEqualTo(1);
    }
}
