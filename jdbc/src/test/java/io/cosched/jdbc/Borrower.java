package io.cosched.jdbc;

import static io.cosched.TestSupport.eventually;

import io.cosched.Coroutine;
import io.cosched.CoroutineState;
import io.cosched.Coroutines;
import io.cosched.IOManager;
import java.sql.Connection;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;

/**
 * A coroutine on one loop that borrows a connection, tells the server's id of its session, holds it until
 * {@link #release()} and then closes it (as many times as it was told): the tests' way to have connections
 * out, borrowers in line, and to hand a connection back at a moment of their choosing.
 */
final class Borrower {

    private static final long WAIT_SECONDS = 20;

    private final CompletableFuture<Long> borrowed = new CompletableFuture<>();
    private final CompletableFuture<Connection> lent = new CompletableFuture<>();
    private final CompletableFuture<Void> release = new CompletableFuture<>();
    private final Coroutine<Connection> coroutine;

    private Borrower(IOManager io, int loopIndex, DataSource ds, RealDatabase db, int closes) {
        coroutine = io.spawnOn(loopIndex, () -> {
            Connection c;
            try {
                c = ds.getConnection();
            } catch (Throwable e) {
                borrowed.completeExceptionally(e);
                throw e;
            }
            try {
                lent.complete(c);
                borrowed.complete(db.idOf(c));
                Coroutines.await(release);
            } finally {
                for (int i = 0; i < closes; i++) {
                    c.close();
                }
            }
            return c;
        });
    }

    /** A borrower on {@code loop} that closes its connection once. */
    static Borrower on(IOManager io, int loopIndex, DataSource ds, RealDatabase db) {
        return new Borrower(io, loopIndex, ds, db, 1);
    }

    /** A borrower on {@code loop} that closes its connection {@code closes} times. */
    static Borrower closingTimes(int closes, IOManager io, int loopIndex, DataSource ds, RealDatabase db) {
        return new Borrower(io, loopIndex, ds, db, closes);
    }

    /** The server's id of the session it borrowed, once it has it. */
    long sessionId() throws Exception {
        return borrowed.get(WAIT_SECONDS, TimeUnit.SECONDS);
    }

    /** The connection it holds, once it has it. */
    Connection connection() throws Exception {
        sessionId();
        return lent.get(WAIT_SECONDS, TimeUnit.SECONDS);
    }

    /** What its borrow failed with. */
    Throwable failure() throws Exception {
        // handle(), not get(): get() wraps a CancellationException in one of its own
        Throwable failure = borrowed.handle((id, e) -> e).get(WAIT_SECONDS, TimeUnit.SECONDS);
        if (failure == null) {
            throw new AssertionError("the borrow succeeded: " + coroutine);
        }
        return failure;
    }

    /** Whether it holds a connection now. */
    boolean hasBorrowed() {
        return borrowed.isDone() && !borrowed.isCompletedExceptionally();
    }

    /** Waits until it is parked, in line for a connection when it has none. */
    Borrower awaitParked() {
        eventually(
                Duration.ofSeconds(WAIT_SECONDS),
                () -> coroutine.state() == CoroutineState.WAITING,
                () -> coroutine + " is " + coroutine.state());
        return this;
    }

    /** Lets it close its connection. */
    void release() {
        release.complete(null);
    }

    /** Lets it close its connection and waits until it has: the connection it closed. */
    Connection releaseAndJoin() throws Exception {
        release();
        return coroutine.toFuture().get(WAIT_SECONDS, TimeUnit.SECONDS);
    }

    Coroutine<Connection> coroutine() {
        return coroutine;
    }
}
