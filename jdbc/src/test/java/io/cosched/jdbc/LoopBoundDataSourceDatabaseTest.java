package io.cosched.jdbc;

import static io.cosched.TestSupport.eventually;
import static io.cosched.jdbc.RealDatabase.POSTGRESQL;
import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariPoolMXBean;
import io.cosched.Coroutine;
import io.cosched.Coroutines;
import io.cosched.IOManager;
import java.net.Socket;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * {@link LoopBoundDataSource} against the real servers {@code .ci/services.sh} starts (each test skips, with the
 * reason, where its server is not configured; {@link LoopBoundDataSourceTest} covers how the pools are made without
 * one): a pool per loop whose connections are sockets of that loop, the gate in front of each, and who gets which
 * loop's connection: a coroutine its own, a plain thread the least loaded loop's; a loop thread none (refused).
 */
@Timeout(60)
class LoopBoundDataSourceDatabaseTest {

    private static final String IO_NAME = "loopds-io";
    private static final long WAIT_SECONDS = 20;

    private IOManager io;
    private LoopBoundDataSource ds;

    @BeforeEach
    void start() {
        io = RealDatabase.twoLoops(IO_NAME);
    }

    @AfterEach
    void stop() {
        if (ds != null) {
            ds.close();
        }
        io.stop(Duration.ofSeconds(10));
    }

    /** A data source on the two loops, {@code perLoop} connections in each loop's pool; skips without the server. */
    private LoopBoundDataSource dataSource(RealDatabase db, int perLoop) {
        return dataSource(db, perLoop, c -> {});
    }

    private LoopBoundDataSource dataSource(RealDatabase db, int perLoop, Consumer<HikariConfig> more) {
        db.assumeConfigured();
        HikariConfig config = db.config("loopds", perLoop * io.threads());
        config.setConnectionTimeout(5_000);
        more.accept(config);
        ds = new LoopBoundDataSource(config, io);
        return ds;
    }

    private HikariPoolMXBean pool(int loopIndex) {
        return RealDatabase.poolOf(ds, loopIndex);
    }

    private List<Integer> activeConnections() {
        return RealDatabase.activeConnections(ds);
    }

    /** The loop {@code c}'s socket lives on, from the loop socket's own description ({@code ...,loop=<io>-<i>]}). */
    private static int loopOf(RealDatabase db, Connection c) throws Exception {
        Socket s = db.socketOf(c);
        assertThat(s.getClass().getName()).as("%s", s).isEqualTo("io.cosched.net.LoopSocket");
        String d = s.toString();
        String marker = ",loop=" + IO_NAME + "-";
        assertThat(d).contains(marker).endsWith("]");
        return Integer.parseInt(d.substring(d.lastIndexOf(marker) + marker.length(), d.length() - 1));
    }

    /**
     * Starts every loop's pool, as an application's traffic has. (A pool not started yet ignores an eviction handed to
     * it: HikariDataSource.evictConnection does nothing without a pool.)
     */
    private void startBothPools() throws Exception {
        for (int loopIndex = 0; loopIndex < 2; loopIndex++) {
            Borrower b = Borrower.on(io, loopIndex, ds, POSTGRESQL);
            b.sessionId();
            b.releaseAndJoin();
        }
    }

    private static boolean gone(RealDatabase db, Connection admin, long session) {
        try {
            return !db.hasSession(admin, session);
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(RealDatabase.class)
    void eachLoopsPoolLendsItsCoroutinesConnectionsWhoseSocketsAreOnThatLoop(RealDatabase db) throws Exception {
        dataSource(db, 2);
        for (int loopIndex = 0; loopIndex < 2; loopIndex++) {
            int home = loopIndex;
            // both connections at once: the whole of the loop's pool, including any HikariCP opened in the background
            String seen = io.spawnOn(home, () -> {
                        try (Connection a = ds.getConnection();
                                Connection b = ds.getConnection()) {
                            return "out " + activeConnections() + ", sockets on loops " + loopOf(db, a) + " and "
                                    + loopOf(db, b) + ", sessions " + (db.idOf(a) != db.idOf(b) ? "two" : "one");
                        }
                    })
                    .toFuture()
                    .get(WAIT_SECONDS, TimeUnit.SECONDS);
            assertThat(seen)
                    .isEqualTo("out " + (home == 0 ? "[2, 0]" : "[0, 2]") + ", sockets on loops " + home + " and "
                            + home + ", sessions two");
        }
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(RealDatabase.class)
    @Tag("carrier-only") // the wake-ups are counted by the loops' carriers
    void aCoroutinesQueriesAreResumedByItsOwnLoopAlone(RealDatabase db) throws Exception {
        dataSource(db, 1);
        for (int loopIndex = 0; loopIndex < 2; loopIndex++) {
            int home = loopIndex;
            queries(db, home, 5); // the pool starts and opens its connection (on HikariCP's thread)
            long remote = io.carrierStats().get(home).remoteWakeups();
            long local = io.carrierStats().get(home).localWakeups();
            assertThat(queries(db, home, 30)).as("one session answered all").hasSize(1);
            // every answer parked the coroutine; a socket on another loop, or the JDK's, would resume it remotely
            assertThat(io.carrierStats().get(home).localWakeups() - local)
                    .as("loop %d", home)
                    .isGreaterThanOrEqualTo(30);
            assertThat(io.carrierStats().get(home).remoteWakeups() - remote)
                    .as("loop %d", home)
                    .isZero();
        }
    }

    /** {@code n} queries on loop {@code loop}, each over a connection borrowed for it: the sessions that answered. */
    private List<Long> queries(RealDatabase db, int loopIndex, int n) throws Exception {
        return io.spawnOn(loopIndex, () -> {
                    List<Long> sessions = new ArrayList<>();
                    for (int i = 0; i < n; i++) {
                        try (Connection c = ds.getConnection()) {
                            long id = db.idOf(c);
                            if (!sessions.contains(id)) {
                                sessions.add(id);
                            }
                        }
                    }
                    return sessions;
                })
                .toFuture()
                .get(WAIT_SECONDS, TimeUnit.SECONDS);
    }

    @Test
    void whileItsLoopsPoolIsOutABorrowerWaitsInLineAndTheConnectionGivenBackWakesIt() throws Exception {
        dataSource(POSTGRESQL, 1);
        Borrower holder = Borrower.on(io, 0, ds, POSTGRESQL);
        long session = holder.sessionId();
        Borrower waiter = Borrower.on(io, 0, ds, POSTGRESQL).awaitParked();
        assertThat(pool(0).getThreadsAwaitingConnection())
                .as("in the gate's line, not inside HikariCP")
                .isZero();

        // the other loop's pool and gate are its own: its borrower is served while loop 0's waits
        Borrower elsewhere = Borrower.on(io, 1, ds, POSTGRESQL);
        assertThat(elsewhere.sessionId()).isNotEqualTo(session);
        elsewhere.releaseAndJoin();
        assertThat(waiter.hasBorrowed()).isFalse();

        holder.releaseAndJoin();
        assertThat(waiter.sessionId()).as("the connection given back").isEqualTo(session);
        waiter.releaseAndJoin();
        assertThat(activeConnections()).containsExactly(0, 0);
    }

    @Test
    void aBorrowerStillInLineAtTheConnectionTimeoutFailsWithTheGatesTransientErrorAndLeavesTheLine() throws Exception {
        dataSource(POSTGRESQL, 1, c -> c.setConnectionTimeout(300));
        Borrower holder = Borrower.on(io, 0, ds, POSTGRESQL);
        long session = holder.sessionId();
        Throwable timedOut = Borrower.on(io, 0, ds, POSTGRESQL).failure();
        // the gate's message: the pool, its size and numbers, and its line first (HikariCP's own puts them last)
        assertThat(timedOut)
                .isInstanceOf(SQLTransientConnectionException.class)
                .hasMessage("loopds-loop0 (size=1, total=1, active=1, idle=0, in=1, waiting=0) - Connection is not "
                        + "available, request timed out after 300ms");
        assertThat(((SQLException) timedOut).getSQLState()).isEqualTo("08001");
        holder.releaseAndJoin();
        // had the timed-out borrower kept its place, the turn given back would have gone to it, and this one would
        // wait out its own timeout in line
        Borrower next = Borrower.on(io, 0, ds, POSTGRESQL);
        assertThat(next.sessionId()).isEqualTo(session);
        next.releaseAndJoin();
    }

    @ParameterizedTest
    @EnumSource(RealDatabase.class)
    void itWarnsOnceWhenItsPoolsMayOpenMoreConnectionsThanTheServerTakes(RealDatabase db) throws Exception {
        try (LogLines log = new LogLines()) {
            dataSource(db, 1, c -> {
                c.setMaximumPoolSize(100_000);
                c.setMinimumIdle(1); // opens one connection per pool, not the 100,000
            });
            int limit;
            try (Connection admin = db.admin()) {
                limit = Database.of(db.url(), null).maxConnections(admin);
            }
            for (int i = 0; i < 3; i++) {
                Borrower b = Borrower.on(io, i % 2, ds, db);
                b.sessionId();
                b.releaseAndJoin();
            }
            assertThat(log.lines())
                    .filteredOn(line -> line.startsWith("WARNING"))
                    .containsExactly(
                            "WARNING loopds: its connection pools may open 100000 connections over 2 loops, but the "
                                    + "database takes " + limit
                                    + " in all (max_connections): connections past that fail to "
                                    + "open, and every other client and instance shares that maximum");
        }
    }

    @Test
    void anInterruptedCoroutineIsRefusedWithACancellationNotAnSqlExceptionAndTakesNoTurn() throws Exception {
        dataSource(POSTGRESQL, 1, c -> c.setConnectionTimeout(1_000));
        String outcome = io.spawnOn(0, () -> {
                    Thread.currentThread().interrupt(); // its request was cancelled before it asked
                    String refused;
                    try (Connection c = ds.getConnection()) {
                        refused = "lent " + c;
                    } catch (CancellationException e) {
                        refused = e.getMessage();
                    }
                    boolean stillInterrupted = Thread.interrupted();
                    // the loop's only connection: a turn kept by the refusal would leave this one in line until its
                    // timeout
                    try (Connection c = ds.getConnection()) {
                        return refused + " | still interrupted " + stillInterrupted + " | then lent "
                                + (POSTGRESQL.idOf(c) > 0);
                    }
                })
                .toFuture()
                .get(WAIT_SECONDS, TimeUnit.SECONDS);
        assertThat(outcome)
                .isEqualTo(
                        "loopds-loop0 (size=1, not started, in=0, waiting=0) - no connection for an interrupted borrower (its "
                                + "request was cancelled, or it timed out) | still interrupted true | then lent true");
    }

    @Test
    void aBorrowerInterruptedInLineIsRefusedWithACancellationAndTheConnectionGoesToTheNext() throws Exception {
        dataSource(POSTGRESQL, 1);
        Borrower holder = Borrower.on(io, 0, ds, POSTGRESQL);
        long session = holder.sessionId();
        Borrower interrupted = Borrower.on(io, 0, ds, POSTGRESQL).awaitParked();
        interrupted.coroutine().interrupt();
        assertThat(interrupted.failure())
                .isInstanceOf(CancellationException.class)
                .hasMessageContaining("no connection for an interrupted borrower");
        holder.releaseAndJoin();
        Borrower next = Borrower.on(io, 0, ds, POSTGRESQL);
        assertThat(next.sessionId()).isEqualTo(session);
        next.releaseAndJoin();
    }

    @Test
    void aPlainThreadIsLentAConnectionOfTheLoopWithTheFewestCoroutinesAndBlocksOnItsSocket() throws Exception {
        dataSource(POSTGRESQL, 1);
        CompletableFuture<Void> done = new CompletableFuture<>();
        Coroutine<Object> busy = io.spawnOn(0, () -> Coroutines.await(done)); // loop 0 has a live coroutine now
        try {
            // twice: among loops of equal load the choice goes round, so one lucky pick would prove nothing
            for (int i = 0; i < 2; i++) {
                try (Connection c = ds.getConnection()) {
                    assertThat(POSTGRESQL.idOf(c))
                            .as("answered to a thread that simply blocks")
                            .isPositive();
                    assertThat(activeConnections()).containsExactly(0, 1);
                    assertThat(loopOf(POSTGRESQL, c)).isEqualTo(1);
                }
            }
        } finally {
            done.complete(null);
            busy.toFuture().get(WAIT_SECONDS, TimeUnit.SECONDS);
        }
    }

    @Test
    void aLoopThreadOutsideAnyCoroutineIsRefusedEvenWithAnotherLoop() throws Exception {
        dataSource(POSTGRESQL, 1);
        // another loop's socket would hold this loop for the query's length, and two loops so waiting on each
        // other's connections would hold both
        Object refused = io.eventLoop(0)
                .submit(() -> {
                    try (Connection c = ds.getConnection()) {
                        return "lent " + c;
                    } catch (SQLException e) {
                        return e;
                    }
                })
                .get(WAIT_SECONDS, TimeUnit.SECONDS);
        assertThat(refused).isInstanceOf(SQLException.class);
        assertThat(((SQLException) refused).getMessage())
                .contains("outside any coroutine", "Run the caller as a coroutine");
        assertThat(activeConnections()).as("nothing lent").containsOnly(0);
    }

    @Test
    void onTheThreadOfAnIOManagersOnlyLoopOutsideAnyCoroutineItRefusesWithAnSqlExceptionThatSaysWhy() throws Exception {
        POSTGRESQL.assumeConfigured();
        IOManager single = IOManager.builder()
                .name("lone-io")
                .threads(1)
                .stallThreshold(Duration.ZERO)
                .build();
        single.start();
        try (LoopBoundDataSource lone = new LoopBoundDataSource(POSTGRESQL.config("lone", 1), single)) {
            Object refused = single.eventLoop(0)
                    .submit(() -> {
                        try (Connection c = lone.getConnection()) {
                            return "lent " + c;
                        } catch (SQLException e) {
                            return e;
                        }
                    })
                    .get(WAIT_SECONDS, TimeUnit.SECONDS);
            assertThat(refused).isInstanceOf(SQLException.class);
            assertThat(((SQLException) refused).getSQLState()).isEqualTo("08001");
            assertThat(((SQLException) refused).getMessage()).contains("outside any coroutine", "has no other loop");
            assertThat(lone.pools().get(0).getHikariPoolMXBean())
                    .as("no pool was started")
                    .isNull();
        } finally {
            single.stop(Duration.ofSeconds(10));
        }
    }

    @Test
    void aConnectionEvictedByTheCoroutineThatBorrowedItIsClosedAndItsPoolOpensAnother() throws Exception {
        dataSource(POSTGRESQL, 1);
        try (Connection admin = POSTGRESQL.admin()) {
            long evicted = io.spawnOn(0, () -> {
                        try (Connection c = ds.getConnection()) {
                            long id = POSTGRESQL.idOf(c);
                            ds.evictConnection(c);
                            return id;
                        }
                    })
                    .toFuture()
                    .get(WAIT_SECONDS, TimeUnit.SECONDS);
            eventually(
                    Duration.ofSeconds(WAIT_SECONDS),
                    () -> gone(POSTGRESQL, admin, evicted),
                    () -> "session " + evicted + " still open");
            Borrower next = Borrower.on(io, 0, ds, POSTGRESQL);
            assertThat(next.sessionId()).isNotEqualTo(evicted);
            next.releaseAndJoin();
            assertThat(pool(0).getTotalConnections()).isEqualTo(1);
        }
    }

    /** Its javadoc: "From another loop, Hikari marks it evicted and its own pool closes it when it is returned." */
    @Test
    void aConnectionEvictedFromAnotherLoopIsClosedByItsOwnPoolWhenItIsReturned() throws Exception {
        dataSource(POSTGRESQL, 1, c -> c.setConnectionTimeout(1_000));
        startBothPools();
        try (Connection admin = POSTGRESQL.admin()) {
            Borrower holder = Borrower.on(io, 0, ds, POSTGRESQL);
            long evicted = holder.sessionId();
            Connection c = holder.connection();
            io.spawnOn(1, () -> {
                        ds.evictConnection(c);
                        return null;
                    })
                    .toFuture()
                    .get(WAIT_SECONDS, TimeUnit.SECONDS);
            holder.releaseAndJoin();
            eventually(
                    Duration.ofSeconds(5),
                    () -> gone(POSTGRESQL, admin, evicted),
                    () -> "session " + evicted
                            + " still open; loop 0's pool: total=" + pool(0).getTotalConnections() + ", active="
                            + pool(0).getActiveConnections() + ", idle=" + pool(0).getIdleConnections());
            Borrower next = Borrower.on(io, 0, ds, POSTGRESQL);
            assertThat(next.sessionId()).isNotEqualTo(evicted);
            next.releaseAndJoin();
        }
    }

    /** Its javadoc: evicting goes through "the pool it came from when the code that borrowed it evicts it". */
    @Test
    void aConnectionEvictedByThePlainThreadThatBorrowedItIsClosedAndItsPoolOpensAnother() throws Exception {
        dataSource(POSTGRESQL, 1, c -> c.setConnectionTimeout(1_000));
        startBothPools();
        try (Connection admin = POSTGRESQL.admin()) {
            // twice: among loops of equal load a plain thread's loop goes round, so each time may be another
            for (int i = 0; i < 2; i++) {
                long evicted;
                try (Connection c = ds.getConnection()) {
                    evicted = POSTGRESQL.idOf(c);
                    ds.evictConnection(c);
                }
                eventually(
                        Duration.ofSeconds(5),
                        () -> gone(POSTGRESQL, admin, evicted),
                        () -> "session " + evicted
                                + " still open; pools: total="
                                + ds.getHikariPoolMXBean().getTotalConnections() + ", active="
                                + activeConnections());
            }
        }
    }
}
