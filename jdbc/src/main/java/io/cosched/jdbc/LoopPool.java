package io.cosched.jdbc;

import com.zaxxer.hikari.HikariDataSource;
import com.zaxxer.hikari.HikariPoolMXBean;
import com.zaxxer.hikari.metrics.IMetricsTracker;
import com.zaxxer.hikari.metrics.MetricsTrackerFactory;
import com.zaxxer.hikari.metrics.PoolStats;
import java.util.ArrayList;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * One loop's HikariCP pool, the line of borrowers in front of it ({@link LoopGate}) and the borrows it has lent.
 *
 * <p>A borrow holds its turn in the line exactly as long as HikariCP's connection is open, whoever closes it. The
 * borrow's own close gives the turn back, but a connection can go back to HikariCP without it: HikariCP's
 * statements, result sets and metadata answer {@code getConnection()} with HikariCP's connection, not the borrow,
 * and Spring closes a stream's connection through its statement. Every such return passes one place in HikariCP,
 * the recycling of its pool entry, and the one thing HikariCP calls there that it lets others provide is its metrics
 * tracker: this pool's tracker ({@link #trackers()}) {@linkplain #reclaim reclaims} the turns of borrows whose
 * connection is closed, on the thread that closed it, before HikariCP hands the entry to anyone else. A connection
 * HikariCP drops without recycling it (broken, evicted while lent) is found closed the next time the line is full:
 * the gate reclaims before a borrower joins the line and before a waiter gives up.
 */
final class LoopPool {

    private final HikariDataSource hikari;
    private final LoopGate gate;
    private final ArrayList<BorrowedConnection> lent; // guarded by itself

    // what the application asked HikariCP's metrics to go to, and the tracker made of it while the pool runs
    private volatile @Nullable MetricsTrackerFactory applicationTrackers;
    private volatile @Nullable Tracker tracker;

    /** {@code hikari} must not have started; its metrics tracker becomes this pool's. */
    LoopPool(HikariDataSource hikari, @Nullable MetricsTrackerFactory applicationTrackers) {
        this.hikari = hikari;
        this.applicationTrackers = applicationTrackers;
        int size = hikari.getMaximumPoolSize();
        this.lent = new ArrayList<>(size);
        this.gate = new LoopGate(size, () -> reclaim(false), this::describe);
        if (hikari.getMetricRegistry() != null) {
            hikari.setMetricRegistry(null); // the application's registry reaches the pool through applicationTrackers
        }
        hikari.setMetricsTrackerFactory(this::newTracker);
    }

    HikariDataSource hikari() {
        return hikari;
    }

    LoopGate gate() {
        return gate;
    }

    /** The line in front of the pool, its size and its numbers, for an error message. */
    String describe() {
        HikariPoolMXBean p = hikari.getHikariPoolMXBean();
        return hikari.getPoolName() + " (size=" + hikari.getMaximumPoolSize() + ", "
                + (p == null
                        ? "not started"
                        : "total=" + p.getTotalConnections() + ", active=" + p.getActiveConnections() + ", idle="
                                + p.getIdleConnections())
                + ", " + gate.state() + ")";
    }

    /** {@code borrow} holds a connection of this pool now. */
    void lent(BorrowedConnection borrow) {
        synchronized (lent) {
            lent.add(borrow);
        }
    }

    /** {@code borrow}'s connection is back (or gone): its turn passes to the next in line. */
    void returned(BorrowedConnection borrow) {
        synchronized (lent) {
            lent.remove(borrow);
        }
        gate.exit();
    }

    /** The lent borrow whose HikariCP connection is {@code connection}, if any. */
    @Nullable
    BorrowedConnection borrowOf(java.sql.Connection connection) {
        synchronized (lent) {
            for (BorrowedConnection b : lent) {
                if (b.lends(connection)) {
                    return b;
                }
            }
        }
        return null;
    }

    /**
     * Ends every borrow whose HikariCP connection has been closed by another way than the borrow's own close, which
     * gives its turn to the next in line. {@code mayWait}: the caller may wait for a cancel request of the borrow's
     * that is on its way to the server (a millisecond or so); HikariCP's recycling thread may, the gate's and an
     * interrupting thread may not.
     */
    void reclaim(boolean mayWait) {
        BorrowedConnection[] found = null;
        int n = 0;
        synchronized (lent) {
            for (BorrowedConnection b : lent) {
                if (b.closedElsewhere()) {
                    if (found == null) {
                        found = new BorrowedConnection[lent.size()];
                    }
                    found[n++] = b;
                }
            }
        }
        if (found == null) {
            return; // every lent connection is open, or was closed by its borrow
        }
        for (int i = 0; i < n; i++) {
            found[i].reclaim(mayWait);
        }
    }

    /** The application's metrics tracker factory from now on; a running pool reports to it at once. */
    void applicationTrackers(@Nullable MetricsTrackerFactory factory) {
        applicationTrackers = factory;
        Tracker t = tracker;
        if (t != null) {
            t.report(factory);
        }
    }

    /** Called by HikariCP once, as the pool starts. */
    private IMetricsTracker newTracker(String poolName, PoolStats hikariStats) {
        Tracker t = new Tracker(poolName);
        tracker = t;
        t.report(applicationTrackers);
        return t;
    }

    /** HikariCP's numbers for the application's metrics, with the borrowers waiting in line counted as pending. */
    private PoolStats stats() {
        return new PoolStats(TimeUnit.SECONDS.toMillis(1)) {
            @Override
            protected void update() {
                HikariPoolMXBean p = hikari.getHikariPoolMXBean();
                if (p != null) {
                    totalConnections = p.getTotalConnections();
                    idleConnections = p.getIdleConnections();
                    activeConnections = p.getActiveConnections();
                    pendingThreads = p.getThreadsAwaitingConnection() + gate.waiting();
                }
                maxConnections = hikari.getMaximumPoolSize();
                minConnections = hikari.getMinimumIdle();
            }
        };
    }

    /** The pool's metrics tracker: reclaims turns as connections come back, and reports to the application's. */
    private final class Tracker implements IMetricsTracker {

        private final String poolName;
        private volatile @Nullable IMetricsTracker application;

        Tracker(String poolName) {
            this.poolName = poolName;
        }

        void report(@Nullable MetricsTrackerFactory factory) {
            IMetricsTracker old = application;
            application = factory == null ? null : factory.create(poolName, stats());
            if (old != null) {
                old.close();
            }
        }

        @Override
        public void recordConnectionUsageMillis(long elapsedBorrowedMillis) {
            reclaim(true); // HikariCP has a connection back and will hand it out once this returns
            IMetricsTracker a = application;
            if (a != null) {
                a.recordConnectionUsageMillis(elapsedBorrowedMillis);
            }
        }

        @Override
        public void recordConnectionCreatedMillis(long connectionCreatedMillis) {
            IMetricsTracker a = application;
            if (a != null) {
                a.recordConnectionCreatedMillis(connectionCreatedMillis);
            }
        }

        @Override
        public void recordConnectionAcquiredNanos(long elapsedAcquiredNanos) {
            IMetricsTracker a = application;
            if (a != null) {
                a.recordConnectionAcquiredNanos(elapsedAcquiredNanos);
            }
        }

        @Override
        public void recordConnectionTimeout() {
            IMetricsTracker a = application;
            if (a != null) {
                a.recordConnectionTimeout();
            }
        }

        @Override
        public void close() {
            IMetricsTracker a = application;
            application = null;
            if (a != null) {
                a.close();
            }
        }
    }
}
