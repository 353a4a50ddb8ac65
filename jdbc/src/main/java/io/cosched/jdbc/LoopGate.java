package io.cosched.jdbc;

import io.cosched.AwaitTimeoutException;
import io.cosched.Coroutines;
import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

/**
 * Who may borrow from one loop's connection pool, in the order they asked: as many borrowers as the connection pool has
 * connections, the others wait in line. A connection given back passes its turn to the first in
 * line, resuming it from the thread that gave the connection back: on a loop, that thread (and so
 * the resume) is the loop's own. Before a borrower joins the line, and before a waiter gives up, the
 * gate asks its connection pool to reclaim turns whose connections went back unseen ({@link LoopPool#reclaim}).
 *
 * <p>Why not let them all wait inside HikariCP: there every borrower that finds no idle connection
 * wakes Hikari's connection-adder thread and parks with a JDK timer (two thread hops for nothing
 * while the connection pool is full: measured, about 2 context switches per query at 100 clients on 20
 * connections); and on one carrier the coroutine that gives a connection back would take it again
 * before the waiter it woke gets to run, every time, and starve it. In line, every waiter gets its
 * turn, and a full connection pool costs no thread but the loop's.
 */
final class LoopGate {

    private final int capacity;
    private final Runnable reclaim; // gives back the turns of borrows whose connection went back unseen
    private final Supplier<String> describe; // the connection pool and its numbers, for a timeout's message
    private final ArrayDeque<CompletableFuture<Void>> line = new ArrayDeque<>(); // guarded by this
    private int taken; // guarded by this

    LoopGate(int capacity, Runnable reclaim, Supplier<String> describe) {
        this.capacity = capacity;
        this.reclaim = reclaim;
        this.describe = describe;
    }

    /**
     * Takes a turn, waiting in line up to {@code timeout}.
     *
     * @throws SQLTransientConnectionException when the wait times out, as HikariCP's own does
     * @throws CancellationException when interrupted while waiting (the interrupt status stays set): the
     *         borrower's request was cancelled, which is no database error (see {@link LoopBoundDataSource#getConnection()})
     */
    void enter(Duration timeout) throws SQLException {
        if (tryTake()) {
            return;
        }
        reclaim.run(); // before the line grows on turns that are free in truth
        CompletableFuture<Void> turn;
        synchronized (this) {
            if (line.isEmpty() && taken < capacity) {
                taken++;
                return;
            }
            turn = new CompletableFuture<>();
            line.add(turn);
        }
        try {
            Coroutines.await(turn, timeout); // parks; the loop's own timer ends it at the connection timeout
        } catch (AwaitTimeoutException e) {
            reclaim.run(); // a turn lost since this waiter joined would go to the first in line
            if (leaveLine(turn)) {
                throw new SQLTransientConnectionException(
                        describe.get() + " - Connection is not available, request timed out after " + timeout.toMillis()
                                + "ms",
                        "08001",
                        e);
            }
            // the turn came just as the time ran out: take it
        } catch (InterruptedException e) {
            if (!leaveLine(turn)) {
                exit(); // a turn was handed over: pass it on
            }
            Thread.currentThread().interrupt();
            CancellationException cancelled = cancelled();
            cancelled.initCause(e);
            throw cancelled;
        }
    }

    private synchronized boolean tryTake() {
        if (line.isEmpty() && taken < capacity) {
            taken++;
            return true;
        }
        return false;
    }

    /** What an interrupted borrower gets instead of a connection. */
    CancellationException cancelled() {
        return new CancellationException(describe.get()
                + " - no connection for an interrupted borrower (its request was " + "cancelled, or it timed out)");
    }

    /** Gives up a place in line; {@code false} when the turn was handed over first. */
    private synchronized boolean leaveLine(CompletableFuture<Void> turn) {
        if (turn.isDone()) {
            return false;
        }
        line.remove(turn);
        return true;
    }

    /** A borrower is done (its connection went back, or it never got one): the turn passes on. */
    void exit() {
        CompletableFuture<Void> next;
        synchronized (this) {
            next = line.poll();
            if (next == null) {
                if (taken
                        > 0) { // a borrow that went round the gate (from a connection pool taken out of it) has no turn
                    taken--;
                }
                return;
            }
        }
        next.complete(null); // resumes the waiter from this thread; its turn is the one just given back
    }

    /** Borrowers in, and in line. */
    synchronized String state() {
        return "in=" + taken + ", waiting=" + line.size();
    }

    /** Borrowers holding a turn. */
    synchronized int taken() {
        return taken;
    }

    /** Borrowers waiting in line. */
    synchronized int waiting() {
        return line.size();
    }
}
