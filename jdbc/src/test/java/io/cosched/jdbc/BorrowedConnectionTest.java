package io.cosched.jdbc;

import static io.cosched.TestSupport.eventually;
import static io.cosched.jdbc.RealDatabase.POSTGRESQL;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariPoolMXBean;
import io.cosched.Coroutine;
import io.cosched.Coroutines;
import io.cosched.IOManager;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.postgresql.PGConnection;

/**
 * What the connection {@link LoopBoundDataSource} lends a coroutine promises ({@link BorrowedConnection}), against
 * the real servers {@code .ci/services.sh} starts (each test skips, with the reason, where its server is not
 * configured). PostgreSQL throughout; MariaDB Connector/J and MySQL Connector/J too where the database's own code
 * is involved: the cancel of a statement, and unwrapping to the driver's connection, which that cancel relies on.
 */
@Timeout(60)
class BorrowedConnectionTest {

    private static final Duration NO_CANCEL_DUE = Duration.ofSeconds(30); // longer than any statement here runs
    private static final long WAIT_SECONDS = 20;

    private IOManager io;
    private LoopBoundDataSource ds;

    @BeforeEach
    void start() {
        io = RealDatabase.twoLoops("borrowed-io");
    }

    @AfterEach
    void stop() {
        if (ds != null) {
            ds.close();
        }
        io.stop(Duration.ofSeconds(10));
    }

    /** A data source on the two loops, {@code perLoop} connections in each loop's pool; skips without the server. */
    private LoopBoundDataSource dataSource(RealDatabase db, int perLoop, Duration cancelAfter) {
        return dataSource(db, perLoop, cancelAfter, c -> {});
    }

    private LoopBoundDataSource dataSource(
            RealDatabase db, int perLoop, Duration cancelAfter, Consumer<HikariConfig> more) {
        db.assumeConfigured();
        HikariConfig config = db.config("borrowed", perLoop * io.threads());
        config.setConnectionTimeout(5_000);
        more.accept(config);
        ds = new LoopBoundDataSource(config, io, cancelAfter);
        return ds;
    }

    private HikariPoolMXBean pool(int loopIndex) {
        return RealDatabase.poolOf(ds, loopIndex);
    }

    private List<Integer> activeConnections() {
        return RealDatabase.activeConnections(ds);
    }

    private static void execute(Connection c, String sql) throws SQLException {
        try (Statement s = c.createStatement()) {
            s.execute(sql);
        }
    }

    /** Waits until the server shows session {@code id} running a statement that contains {@code fragment}. */
    private static void awaitRunning(RealDatabase db, Connection admin, long id, String fragment) {
        eventually(
                Duration.ofSeconds(WAIT_SECONDS),
                () -> {
                    try {
                        return db.runs(admin, id, fragment);
                    } catch (SQLException e) {
                        throw new IllegalStateException(e);
                    }
                },
                () -> "session " + id + " does not run " + fragment);
    }

    /**
     * Waits until {@code deadline} ({@link System#nanoTime()}) has passed. For the two tests about when a cancel
     * comes due: that is a moment, not an outcome, and nothing but time passing reaches it.
     */
    private static void waitOut(long deadline) throws Exception {
        long left = Math.max(0, deadline - System.nanoTime());
        CompletableFuture.runAsync(() -> {}, CompletableFuture.delayedExecutor(left, TimeUnit.NANOSECONDS))
                .get(WAIT_SECONDS, TimeUnit.SECONDS);
    }

    /** Whether the calling coroutine is no longer shielded: an interrupt of it now reaches its thread at once. */
    private static boolean interruptReachesItAtOnce() {
        Coroutines.current().orElseThrow().interrupt();
        return Thread.interrupted();
    }

    @Test
    void aConnectionBorrowedInACoroutineIsOneOfItsOwnLoopsPool() throws Exception {
        dataSource(POSTGRESQL, 1, LoopBoundDataSource.DEFAULT_CANCEL_STATEMENTS_AFTER);
        for (int loopIndex = 0; loopIndex < 2; loopIndex++) {
            List<Integer> activeWhileHeld = io.spawnOn(loopIndex, () -> {
                        try (Connection c = ds.getConnection()) {
                            assertThat(POSTGRESQL.idOf(c)).isPositive();
                            return activeConnections();
                        }
                    })
                    .join();
            assertThat(activeWhileHeld)
                    .as("connections out of each pool while loop %d's coroutine holds one", loopIndex)
                    .containsExactly(loopIndex == 0 ? 1 : 0, loopIndex == 1 ? 1 : 0);
        }
        assertThat(activeConnections()).containsExactly(0, 0);
    }

    @Test
    void closeGivesTheConnectionBackToItsPoolOnceAndASecondCloseChangesNothing() throws Exception {
        dataSource(POSTGRESQL, 1, LoopBoundDataSource.DEFAULT_CANCEL_STATEMENTS_AFTER);
        Borrower first = Borrower.closingTimes(2, io, 0, ds, POSTGRESQL);
        long session = first.sessionId();
        Borrower second = Borrower.on(io, 0, ds, POSTGRESQL).awaitParked();

        Connection closedTwice = first.releaseAndJoin();
        assertThat(closedTwice.isClosed()).isTrue();
        assertThat(second.sessionId())
                .as("the connection went back to loop 0's pool, and on to the borrower in line")
                .isEqualTo(session);

        // The one connection is out again, so a third borrower waits in the gate. Had the second close given a
        // turn back as well, the gate would count none taken and let it through to wait inside HikariCP instead.
        Borrower third = Borrower.on(io, 0, ds, POSTGRESQL).awaitParked();
        assertThat(pool(0).getThreadsAwaitingConnection())
                .as("borrowers waiting inside HikariCP")
                .isZero();
        assertThat(third.hasBorrowed()).isFalse();
        second.releaseAndJoin();
        assertThat(third.sessionId()).isEqualTo(session);
        third.releaseAndJoin();
        assertThat(pool(0).getTotalConnections()).isEqualTo(1);
        assertThat(pool(0).getIdleConnections()).isEqualTo(1);
    }

    @Test
    void abortEndsTheSessionOnTheServerAndLeavesTheBorrowClosedAndUnshielded() throws Exception {
        dataSource(POSTGRESQL, 1, LoopBoundDataSource.DEFAULT_CANCEL_STATEMENTS_AFTER);
        try (Connection admin = POSTGRESQL.admin()) {
            CompletableFuture<Long> session = new CompletableFuture<>();
            String outcome = io.spawnOn(0, () -> {
                        Connection c = ds.getConnection();
                        session.complete(POSTGRESQL.idOf(c));
                        c.abort(Runnable::run); // the driver closes its socket on the executor given: here, at once
                        String state = "closed " + c.isClosed() + ", unshielded " + interruptReachesItAtOnce();
                        c.abort(Runnable::run); // the borrow has ended: both do nothing now, and throw nothing
                        c.close();
                        return state;
                    })
                    .toFuture()
                    .get(WAIT_SECONDS, TimeUnit.SECONDS);
            assertThat(outcome).isEqualTo("closed true, unshielded true");
            long id = session.get();
            eventually(
                    Duration.ofSeconds(WAIT_SECONDS),
                    () -> {
                        try {
                            return !POSTGRESQL.hasSession(admin, id);
                        } catch (SQLException e) {
                            throw new IllegalStateException(e);
                        }
                    },
                    () -> "session " + id + " still on the server");
        }
    }

    /**
     * The class's contract: "closing (or aborting) it gives back [...] the connection to Hikari". An aborted
     * connection cannot be used again, so HikariCP must drop it and open another for the loop's next borrower.
     */
    @Test
    void abortGivesThePoolsSlotBackSoTheNextBorrowerGetsANewConnection() throws Exception {
        dataSource(
                POSTGRESQL, 1, LoopBoundDataSource.DEFAULT_CANCEL_STATEMENTS_AFTER, c -> c.setConnectionTimeout(1_000));
        long aborted = io.spawnOn(0, () -> {
                    try (Connection c = ds.getConnection()) { // and closed after the abort, as applications write it
                        long id = POSTGRESQL.idOf(c);
                        c.abort(Runnable::run);
                        return id;
                    }
                })
                .toFuture()
                .get(WAIT_SECONDS, TimeUnit.SECONDS);
        long next = io.spawnOn(0, () -> {
                    try (Connection c = ds.getConnection()) {
                        return POSTGRESQL.idOf(c);
                    }
                })
                .toFuture()
                .get(WAIT_SECONDS, TimeUnit.SECONDS);
        assertThat(next).isNotEqualTo(aborted);
        assertThat(pool(0).getActiveConnections()).isZero();
    }

    @Test
    void aCancelledCoroutineFinishesItsStatementOnItsConnectionAndIsInterruptedOnceTheConnectionIsBack()
            throws Exception {
        dataSource(POSTGRESQL, 1, NO_CANCEL_DUE);
        long key = ThreadLocalRandom.current().nextLong();
        try (Connection admin = POSTGRESQL.admin()) {
            // the coroutine's statement waits for this lock: it runs exactly as long as the test wants
            execute(admin, "SELECT pg_advisory_lock(" + key + ")");
            CompletableFuture<Long> running = new CompletableFuture<>();
            // the coroutine's own account: cancel() ends the coroutine's result at once, before its code has returned
            CompletableFuture<String> outcome = new CompletableFuture<>();
            Coroutine<Void> borrower = io.spawnOn(0, () -> {
                try {
                    long session;
                    String during;
                    try (Connection c = ds.getConnection();
                            Statement s = c.createStatement()) {
                        session = POSTGRESQL.idOf(c);
                        running.complete(session);
                        s.execute("SELECT pg_advisory_xact_lock(" + key + ")");
                        during = "statement finished, interrupted inside "
                                + Thread.currentThread().isInterrupted();
                    }
                    boolean after = Thread.interrupted();
                    try (Connection c = ds.getConnection()) { // the pool's one connection: the same, unless it broke
                        outcome.complete(
                                during + ", after " + after + ", same session next " + (POSTGRESQL.idOf(c) == session));
                    }
                } catch (Throwable e) {
                    outcome.completeExceptionally(e);
                }
                return null;
            });
            awaitRunning(POSTGRESQL, admin, running.get(WAIT_SECONDS, TimeUnit.SECONDS), "pg_advisory_xact_lock");
            assertThat(borrower.cancel()).isTrue();
            assertThat(ds.interruptsDeferred())
                    .as("held back by the borrow, on the cancelling thread")
                    .isEqualTo(1);
            execute(admin, "SELECT pg_advisory_unlock(" + key + ")");
            assertThat(outcome.get(WAIT_SECONDS, TimeUnit.SECONDS))
                    .isEqualTo("statement finished, interrupted inside false, after true, same session next true");
            assertThat(ds.statementsCancelled()).isZero();
            assertThat(pool(0).getTotalConnections())
                    .as("none broken, none added")
                    .isEqualTo(1);
        }
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(RealDatabase.class)
    void aStatementStillRunningPastTheGraceIsCancelledOnTheServerAndItsConnectionStaysInThePool(RealDatabase db)
            throws Exception {
        dataSource(db, 1, Duration.ofMillis(100));
        try (Connection admin = db.admin()) {
            CompletableFuture<Long> running = new CompletableFuture<>();
            Coroutine<String> borrower = io.spawnOn(0, () -> {
                long session;
                String during;
                try (Connection c = ds.getConnection();
                        Statement s = c.createStatement()) {
                    session = db.idOf(c);
                    running.complete(session);
                    try {
                        s.execute(db.sleep("30"));
                        during = "ran to its end";
                    } catch (SQLException e) {
                        during = e.getSQLState();
                    }
                }
                boolean after = Thread.interrupted();
                try (Connection c = ds.getConnection()) { // the pool's one connection: the same, unless it broke
                    return during + ", interrupted after " + after + ", same session next " + (db.idOf(c) == session);
                }
            });
            // interrupted only once the server runs it: a cancel that came before would find no statement to end
            awaitRunning(db, admin, running.get(WAIT_SECONDS, TimeUnit.SECONDS), db.sleep("30"));
            borrower.interrupt();
            assertThat(borrower.toFuture().get(WAIT_SECONDS, TimeUnit.SECONDS))
                    .isEqualTo(db.cancelledSqlState() + ", interrupted after true, same session next true");
            assertThat(ds.interruptsDeferred()).isEqualTo(1);
            assertThat(ds.statementsCancelled()).isEqualTo(1);
            assertThat(pool(0).getTotalConnections())
                    .as("none broken, none added")
                    .isEqualTo(1);
        }
    }

    @Test
    void aCancelDueAfterTheBorrowEndedNeverReachesTheNextBorrowersStatement() throws Exception {
        Duration grace = Duration.ofMillis(300);
        dataSource(POSTGRESQL, 1, grace);
        long first = ThreadLocalRandom.current().nextLong();
        long second = first + 1;
        try (Connection admin = POSTGRESQL.admin()) {
            execute(admin, "SELECT pg_advisory_lock(" + first + "), pg_advisory_lock(" + second + ")");
            CompletableFuture<Long> running = new CompletableFuture<>();
            Coroutine<Boolean> interrupted = io.spawnOn(0, () -> {
                try (Connection c = ds.getConnection();
                        Statement s = c.createStatement()) {
                    running.complete(POSTGRESQL.idOf(c));
                    s.execute("SELECT pg_advisory_xact_lock(" + first + ")");
                }
                return Thread.interrupted();
            });
            long session = running.get(WAIT_SECONDS, TimeUnit.SECONDS);
            awaitRunning(POSTGRESQL, admin, session, "pg_advisory_xact_lock(" + first + ")");
            interrupted.interrupt();
            long due = System.nanoTime() + grace.toNanos(); // no earlier than the interrupted borrow's cancel is due
            execute(admin, "SELECT pg_advisory_unlock(" + first + ")");
            assertThat(interrupted.toFuture().get(WAIT_SECONDS, TimeUnit.SECONDS))
                    .as("interrupted after its borrow")
                    .isTrue();

            // the loop's one connection, borrowed again, runs a statement across the moment that cancel was due
            CompletableFuture<Long> nextRunning = new CompletableFuture<>();
            Coroutine<String> next = io.spawnOn(0, () -> {
                try (Connection c = ds.getConnection();
                        Statement s = c.createStatement()) {
                    nextRunning.complete(POSTGRESQL.idOf(c));
                    s.execute("SELECT pg_advisory_xact_lock(" + second + ")");
                    return "ran to its end";
                } catch (SQLException e) {
                    return e.getSQLState();
                }
            });
            assertThat(nextRunning.get(WAIT_SECONDS, TimeUnit.SECONDS)).isEqualTo(session);
            awaitRunning(POSTGRESQL, admin, session, "pg_advisory_xact_lock(" + second + ")");
            // what is tested is that nothing happens when the cancel was due: only time passing can show it
            waitOut(due + TimeUnit.MILLISECONDS.toNanos(300));
            assertThat(POSTGRESQL.runs(admin, session, "pg_advisory_xact_lock(" + second + ")"))
                    .as("still waiting")
                    .isTrue();
            execute(admin, "SELECT pg_advisory_unlock(" + second + ")");
            assertThat(next.toFuture().get(WAIT_SECONDS, TimeUnit.SECONDS)).isEqualTo("ran to its end");
            assertThat(ds.statementsCancelled()).isZero();
        }
    }

    /**
     * The class's contract: "A statement still running {@code cancelAfter} past the interrupt is cancelled on the
     * server", here for an interrupt that comes while HikariCP is still opening the connection (the borrow is
     * shielded from there on, so the borrower is lent the connection and runs its statement all the same).
     */
    @Test
    void aStatementOfACoroutineInterruptedWhileHikariCPOpenedItsConnectionIsCancelledAfterTheGrace() throws Exception {
        Duration grace = Duration.ofMillis(200);
        long opening = ThreadLocalRandom.current().nextLong();
        long statement = opening + 1;
        // HikariCP's first connection of the pool waits in its init statement for the test's lock
        dataSource(POSTGRESQL, 1, grace, c -> c.setConnectionInitSql("SELECT pg_advisory_xact_lock(" + opening + ")"));
        try (Connection admin = POSTGRESQL.admin()) {
            execute(admin, "SELECT pg_advisory_lock(" + opening + "), pg_advisory_lock(" + statement + ")");
            CompletableFuture<Long> lent = new CompletableFuture<>();
            Coroutine<String> borrower = io.spawnOn(0, () -> {
                try (Connection c = ds.getConnection();
                        Statement s = c.createStatement()) {
                    lent.complete(POSTGRESQL.idOf(c));
                    s.execute("SELECT pg_advisory_xact_lock(" + statement + ")");
                    return "ran to its end";
                } catch (SQLException e) {
                    return e.getSQLState();
                }
            });
            eventually(
                    Duration.ofSeconds(WAIT_SECONDS),
                    () -> sessionsRunning(admin, "pg_advisory_xact_lock(" + opening + ")") == 1,
                    () -> "HikariCP is not opening a connection");
            borrower.interrupt();
            long due = System.nanoTime() + grace.toNanos();
            assertThat(ds.interruptsDeferred())
                    .as("held back by the borrow, which is shielded already")
                    .isEqualTo(1);
            // the cancel must come due while HikariCP still opens the connection: only time passing can see to it
            waitOut(due + TimeUnit.MILLISECONDS.toNanos(300));
            execute(admin, "SELECT pg_advisory_unlock(" + opening + ")");
            awaitRunning(
                    POSTGRESQL,
                    admin,
                    lent.get(WAIT_SECONDS, TimeUnit.SECONDS),
                    "pg_advisory_xact_lock(" + statement + ")");
            try {
                assertThat(borrower.toFuture().get(5, TimeUnit.SECONDS)).isEqualTo(POSTGRESQL.cancelledSqlState());
            } finally {
                execute(admin, "SELECT pg_advisory_unlock_all()");
            }
            assertThat(ds.statementsCancelled()).isEqualTo(1);
        }
    }

    /** How many sessions run a statement containing {@code fragment} now. */
    private static long sessionsRunning(Connection admin, String fragment) {
        try (PreparedStatement ps = admin.prepareStatement("SELECT count(*) FROM pg_stat_activity "
                + "WHERE state = 'active' AND query LIKE ? AND pid <> pg_backend_pid()")) {
            ps.setString(1, "%" + fragment + "%");
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(RealDatabase.class)
    void unwrapReachesTheDriversConnectionOfTheSameSessionAndIsWrapperForAgrees(RealDatabase db) throws Exception {
        dataSource(db, 1, LoopBoundDataSource.DEFAULT_CANCEL_STATEMENTS_AFTER);
        Class<?> another = (db == POSTGRESQL ? RealDatabase.MARIADB : POSTGRESQL).driverConnection();
        io.spawnOn(0, () -> {
                    try (Connection c = ds.getConnection()) {
                        assertThat(c.unwrap(Connection.class)).isSameAs(c);
                        assertThat(c.unwrap(BorrowedConnection.class)).isSameAs(c);
                        assertThat(c.isWrapperFor(Connection.class)).isTrue();
                        Object driver = c.unwrap(db.driverConnection());
                        assertThat(driver).isInstanceOf(db.driverConnection()).isNotSameAs(c);
                        // the very session the borrow runs its statements on: the one a cancel must reach
                        assertThat(db.driverSessionId(driver)).isEqualTo(db.idOf(c));
                        assertThat(c.isWrapperFor(db.driverConnection())).isTrue();
                        assertThat(c.isWrapperFor(another)).isFalse();
                        assertThatThrownBy(() -> c.unwrap(another)).isInstanceOf(SQLException.class);
                    }
                    return null;
                })
                .toFuture()
                .get(WAIT_SECONDS, TimeUnit.SECONDS);
    }

    @Test
    void aConnectionUsedAfterCloseFailsAndNeverReachesTheNextBorrowersSession() throws Exception {
        dataSource(POSTGRESQL, 1, LoopBoundDataSource.DEFAULT_CANCEL_STATEMENTS_AFTER);
        io.spawnOn(0, () -> {
                    Connection closed = ds.getConnection();
                    long session = POSTGRESQL.idOf(closed);
                    closed.close();
                    assertThat(interruptReachesItAtOnce())
                            .as("the borrow's shield closed with it")
                            .isTrue();
                    try (Connection next = ds.getConnection()) {
                        assertThat(POSTGRESQL.idOf(next))
                                .as("the pool's one connection, lent again")
                                .isEqualTo(session);
                        assertThat(closed.isClosed()).isTrue();
                        assertThat(next.isClosed()).isFalse();
                        assertThatThrownBy(closed::createStatement)
                                .isInstanceOf(SQLException.class)
                                .hasMessage("Connection is closed");
                        assertThatThrownBy(() -> closed.prepareStatement("SELECT 1"))
                                .isInstanceOf(SQLException.class);
                        assertThatThrownBy(() -> closed.setAutoCommit(false)).isInstanceOf(SQLException.class);
                        assertThatThrownBy(() -> closed.unwrap(PGConnection.class))
                                .isInstanceOf(SQLException.class);
                        assertThat(closed.isValid(1)).isFalse();
                        assertThat(closed.unwrap(Connection.class))
                                .as("it still answers for itself")
                                .isSameAs(closed);
                        closed.abort(
                                Runnable::run); // the borrow has ended: this must not reach the connection lent again
                        closed.close();
                        assertThat(next.getAutoCommit())
                                .as("the next borrower's session as it was")
                                .isTrue();
                        assertThat(POSTGRESQL.idOf(next)).isEqualTo(session);
                        assertThat(next.isValid(1)).isTrue();
                    }
                    return null;
                })
                .toFuture()
                .get(WAIT_SECONDS, TimeUnit.SECONDS);
        assertThat(pool(0).getTotalConnections()).isEqualTo(1);
    }
}
