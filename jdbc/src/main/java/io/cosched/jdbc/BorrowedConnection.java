package io.cosched.jdbc;

import io.cosched.Coroutines;
import io.cosched.Shield;
import io.cosched.Timer;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.sql.Array;
import java.sql.Blob;
import java.sql.CallableStatement;
import java.sql.Clob;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.NClob;
import java.sql.PreparedStatement;
import java.sql.SQLClientInfoException;
import java.sql.SQLException;
import java.sql.SQLWarning;
import java.sql.SQLXML;
import java.sql.Savepoint;
import java.sql.ShardingKey;
import java.sql.Statement;
import java.sql.Struct;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import org.jspecify.annotations.Nullable;

/**
 * The connection a borrower gets from {@link LoopBoundDataSource}: HikariCP's, and what the borrow holds
 * until it is closed. Every JDBC call goes straight to Hikari's connection; closing (or aborting) it gives
 * back three things: the connection to Hikari, the turn in the loop's {@link LoopGate}, and the coroutine's
 * {@link Shield}. When Hikari's connection is closed another way (through a statement's {@code getConnection()},
 * as Spring closes a stream's), its connection pool {@linkplain LoopPool#reclaim reclaims} the turn and the shield.
 *
 * <p>It {@linkplain #equals equals} Hikari's connection it lends, which is what statements, result sets and
 * metadata answer {@code getConnection()} with: Spring's {@code DataSourceUtils} tells by equality whether the
 * connection a statement hands back is the transaction's, which it must leave open.
 *
 * <p>The shield is what keeps a cancelled request from breaking the connection: while the borrower holds it,
 * an interrupt of the borrowing coroutine (its client went away, its timeout passed) does not reach its
 * socket read, which would close the socket and leave the connection pool a broken connection. The statement under way
 * finishes, the connection goes back to the connection pool intact, and then the coroutine is interrupted. A statement
 * still running {@code cancelAfter} past the interrupt is cancelled on the server (PostgreSQL's cancel
 * request), so the driver ends it with an error and the connection stays usable.
 */
final class BorrowedConnection implements Connection {

    private static final int IN_USE = 0;
    private static final int CANCELLING = 1; // a cancel request is on its way to the server
    private static final int RETURNED = 2;
    private static final VarHandle STATE;

    static {
        try {
            STATE = MethodHandles.lookup().findVarHandle(BorrowedConnection.class, "state", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    // Hikari's, once it has lent one: the borrower only ever sees it set; a cancel that comes earlier finds
    // none and has no statement of ours to cancel
    private volatile @Nullable Connection connection;
    private final LoopPool pool; // the loop's connection pool the connection comes from
    private final StatementCanceller canceller;
    private final Shield shield;

    @SuppressWarnings("unused") // through STATE
    private volatile int state;

    private volatile @Nullable Timer cancelTimer;
    private volatile @Nullable CompletableFuture<Void> cancelDone;
    // A cancel came while Hikari was still finding the connection: lend() schedules it again, so that the
    // interrupted borrower's statement is cancelled like any other
    private volatile boolean cancelMissed;

    /**
     * Takes over the turn in {@code gate} and opens the calling coroutine's shield, before HikariCP is asked
     * for the connection: Hikari may check an idle connection with a query before it lends it.
     */
    BorrowedConnection(LoopPool pool, StatementCanceller canceller) {
        this.pool = pool;
        this.canceller = canceller;
        this.shield = Coroutines.shield(this::interrupted);
    }

    /** Hikari lent {@code c}: this borrow is the borrower's connection now. */
    BorrowedConnection lend(Connection c) {
        this.connection = c;
        pool.lent(this);
        if (cancelMissed) { // read after the write above: a cancel either sees the connection or is scheduled again
            cancelMissed = false;
            cancelTimer = canceller.schedule(this::cancelStatement);
        }
        return this;
    }

    /** Hikari lent nothing: the turn and the shield go back at once. */
    void abandon() {
        Timer t = cancelTimer;
        if (t != null) {
            t.cancel();
        }
        STATE.setVolatile(this, RETURNED);
        giveBack();
    }

    /** Whether {@code c} is the connection this borrow lends (Hikari's). */
    boolean lends(Connection c) {
        return connection == c;
    }

    /** Still lent as far as this borrow knows, while Hikari's connection is closed: it went back another way. */
    boolean closedElsewhere() {
        Connection c = connection;
        return state == IN_USE && c != null && closed(c);
    }

    /**
     * Ends this borrow if its connection went back another way: gives its turn to the next in line and lets the
     * interrupt through. {@code mayWait}: whether the caller may wait for a cancel request on its way to the
     * server; a caller that may not leaves the borrow to the next reclaim while one is.
     */
    void reclaim(boolean mayWait) {
        if (closedElsewhere() && (mayWait ? end() : STATE.compareAndSet(this, IN_USE, RETURNED))) {
            Timer t = cancelTimer;
            if (t != null) {
                t.cancel();
            }
            giveBack();
        }
    }

    private static boolean closed(Connection c) {
        try {
            return c.isClosed();
        } catch (SQLException e) {
            return true; // Hikari's connection answers from a field; a driver's that fails to answer is no use either
        }
    }

    /** Hikari's connection: {@link #lend} sets it before the borrower gets this borrow, so its calls all find it. */
    private Connection lent() {
        Connection c = connection;
        if (c == null) {
            throw new IllegalStateException("connection: null (expected: lent by HikariCP before the borrow is used)");
        }
        return c;
    }

    /** The borrowing coroutine is being interrupted (on the interrupting thread: must not block). */
    private void interrupted() {
        canceller.deferred();
        reclaim(false); // a connection that went back another way has no statement to wait for
        if (state == IN_USE) {
            cancelTimer = canceller.schedule(this::cancelStatement);
        }
    }

    /** In a coroutine of its own: asks the server to end the statement under way, unless the borrow ended first. */
    private void cancelStatement() {
        reclaim(false); // gone back another way: nothing of this borrow's left to cancel
        CompletableFuture<Void> done = new CompletableFuture<>();
        cancelDone = done; // before the state says so: a close that sees CANCELLING waits for it
        if (!STATE.compareAndSet(this, IN_USE, CANCELLING)) {
            return; // returned: the connection may be someone else's by now
        }
        try {
            cancelMissed = true; // written before the read below: lend() sees it if this sees no connection
            Connection c = connection;
            if (c != null) {
                cancelMissed = false;
                canceller.cancel(c);
            }
        } finally {
            STATE.compareAndSet(this, CANCELLING, IN_USE);
            done.complete(null);
        }
    }

    @Override
    public void close() throws SQLException {
        if (end()) {
            try {
                lent().close();
            } finally {
                giveBack();
            }
        }
    }

    @Override
    public void abort(Executor executor) throws SQLException {
        if (end()) {
            Connection c = lent();
            try {
                c.abort(executor);
            } finally {
                // Hikari's abort reaches only the driver's connection, and its entry goes back to the connection pool
                // only on
                // close: evicted first (by its owner: at once), the entry leaves the connection pool and the close
                // returns nothing
                pool.hikari().evictConnection(c);
                try {
                    c.close();
                } catch (SQLException aborted) {
                    // the aborted connection's own complaint; Hikari has let it go already
                }
                giveBack();
            }
        }
    }

    /** Evicts the connection from the connection pool it came from: at once while it is lent, else when it comes back. */
    void evict() {
        Connection c = connection;
        if (c != null) {
            pool.hikari().evictConnection(c);
        }
    }

    /**
     * Ends the borrow, once: waits for a cancel request under way (so that it cannot reach the statement of
     * whoever borrows the connection next) and stops one that is still to come.
     *
     * @return true for the one call that ends it
     */
    private boolean end() {
        Timer t = cancelTimer;
        if (t != null) {
            t.cancel();
        }
        for (; ; ) {
            int s = state;
            if (s == RETURNED) {
                return false;
            }
            if (s == IN_USE && STATE.compareAndSet(this, IN_USE, RETURNED)) {
                return true;
            }
            CompletableFuture<Void> done = cancelDone;
            if (s == CANCELLING && done != null) {
                done.join(); // a millisecond or so: one round trip to the server's postmaster
            }
        }
    }

    /** After Hikari has the connection back: the next borrower in line finds it idle, then the interrupt arrives. */
    private void giveBack() {
        try {
            pool.returned(this);
        } finally {
            shield.close();
        }
    }

    @Override
    public boolean isClosed() throws SQLException {
        return state == RETURNED || lent().isClosed();
    }

    @Override
    public <T> T unwrap(Class<T> type) throws SQLException {
        return type.isInstance(this) ? type.cast(this) : lent().unwrap(type);
    }

    @Override
    public boolean isWrapperFor(Class<?> type) throws SQLException {
        return type.isInstance(this) || lent().isWrapperFor(type);
    }

    /**
     * Equal to itself and to Hikari's connection it lends: what statements, result sets and metadata answer
     * {@code getConnection()} with. Spring's {@code DataSourceUtils.releaseConnection} leaves a connection open when
     * it equals the transaction's, and closes it otherwise: a stream closed inside a transaction would close the
     * transaction's connection under it. Hikari's connection does not return the favour ({@code equals} is its
     * identity), as no caller asks it.
     */
    @Override
    public boolean equals(@Nullable Object other) {
        return other == this || (other != null && other == connection);
    }

    @Override
    public int hashCode() {
        return System.identityHashCode(connection); // Hikari's identity, which equals agrees with
    }

    @Override
    public String toString() {
        return "Borrowed" + connection;
    }

    @Override
    public Statement createStatement() throws SQLException {
        return lent().createStatement();
    }

    @Override
    public PreparedStatement prepareStatement(String sql) throws SQLException {
        return lent().prepareStatement(sql);
    }

    @Override
    public CallableStatement prepareCall(String sql) throws SQLException {
        return lent().prepareCall(sql);
    }

    @Override
    public String nativeSQL(String sql) throws SQLException {
        return lent().nativeSQL(sql);
    }

    @Override
    public void setAutoCommit(boolean autoCommit) throws SQLException {
        lent().setAutoCommit(autoCommit);
    }

    @Override
    public boolean getAutoCommit() throws SQLException {
        return lent().getAutoCommit();
    }

    @Override
    public void commit() throws SQLException {
        lent().commit();
    }

    @Override
    public void rollback() throws SQLException {
        lent().rollback();
    }

    @Override
    public DatabaseMetaData getMetaData() throws SQLException {
        return lent().getMetaData();
    }

    @Override
    public void setReadOnly(boolean readOnly) throws SQLException {
        lent().setReadOnly(readOnly);
    }

    @Override
    public boolean isReadOnly() throws SQLException {
        return lent().isReadOnly();
    }

    @Override
    public void setCatalog(String catalog) throws SQLException {
        lent().setCatalog(catalog);
    }

    @Override
    public String getCatalog() throws SQLException {
        return lent().getCatalog();
    }

    @Override
    public void setTransactionIsolation(int level) throws SQLException {
        lent().setTransactionIsolation(level);
    }

    @Override
    public int getTransactionIsolation() throws SQLException {
        return lent().getTransactionIsolation();
    }

    @Override
    public SQLWarning getWarnings() throws SQLException {
        return lent().getWarnings();
    }

    @Override
    public void clearWarnings() throws SQLException {
        lent().clearWarnings();
    }

    @Override
    public Statement createStatement(int resultSetType, int resultSetConcurrency) throws SQLException {
        return lent().createStatement(resultSetType, resultSetConcurrency);
    }

    @Override
    public PreparedStatement prepareStatement(String sql, int resultSetType, int resultSetConcurrency)
            throws SQLException {
        return lent().prepareStatement(sql, resultSetType, resultSetConcurrency);
    }

    @Override
    public CallableStatement prepareCall(String sql, int resultSetType, int resultSetConcurrency) throws SQLException {
        return lent().prepareCall(sql, resultSetType, resultSetConcurrency);
    }

    @Override
    public Map<String, Class<?>> getTypeMap() throws SQLException {
        return lent().getTypeMap();
    }

    @Override
    public void setTypeMap(Map<String, Class<?>> map) throws SQLException {
        lent().setTypeMap(map);
    }

    @Override
    public void setHoldability(int holdability) throws SQLException {
        lent().setHoldability(holdability);
    }

    @Override
    public int getHoldability() throws SQLException {
        return lent().getHoldability();
    }

    @Override
    public Savepoint setSavepoint() throws SQLException {
        return lent().setSavepoint();
    }

    @Override
    public Savepoint setSavepoint(String name) throws SQLException {
        return lent().setSavepoint(name);
    }

    @Override
    public void rollback(Savepoint savepoint) throws SQLException {
        lent().rollback(savepoint);
    }

    @Override
    public void releaseSavepoint(Savepoint savepoint) throws SQLException {
        lent().releaseSavepoint(savepoint);
    }

    @Override
    public Statement createStatement(int resultSetType, int resultSetConcurrency, int resultSetHoldability)
            throws SQLException {
        return lent().createStatement(resultSetType, resultSetConcurrency, resultSetHoldability);
    }

    @Override
    public PreparedStatement prepareStatement(
            String sql, int resultSetType, int resultSetConcurrency, int resultSetHoldability) throws SQLException {
        return lent().prepareStatement(sql, resultSetType, resultSetConcurrency, resultSetHoldability);
    }

    @Override
    public CallableStatement prepareCall(
            String sql, int resultSetType, int resultSetConcurrency, int resultSetHoldability) throws SQLException {
        return lent().prepareCall(sql, resultSetType, resultSetConcurrency, resultSetHoldability);
    }

    @Override
    public PreparedStatement prepareStatement(String sql, int autoGeneratedKeys) throws SQLException {
        return lent().prepareStatement(sql, autoGeneratedKeys);
    }

    @Override
    public PreparedStatement prepareStatement(String sql, int[] columnIndexes) throws SQLException {
        return lent().prepareStatement(sql, columnIndexes);
    }

    @Override
    public PreparedStatement prepareStatement(String sql, String[] columnNames) throws SQLException {
        return lent().prepareStatement(sql, columnNames);
    }

    @Override
    public Clob createClob() throws SQLException {
        return lent().createClob();
    }

    @Override
    public Blob createBlob() throws SQLException {
        return lent().createBlob();
    }

    @Override
    public NClob createNClob() throws SQLException {
        return lent().createNClob();
    }

    @Override
    public SQLXML createSQLXML() throws SQLException {
        return lent().createSQLXML();
    }

    @Override
    public boolean isValid(int timeout) throws SQLException {
        return lent().isValid(timeout);
    }

    @Override
    public void setClientInfo(String name, String value) throws SQLClientInfoException {
        lent().setClientInfo(name, value);
    }

    @Override
    public void setClientInfo(Properties properties) throws SQLClientInfoException {
        lent().setClientInfo(properties);
    }

    @Override
    public String getClientInfo(String name) throws SQLException {
        return lent().getClientInfo(name);
    }

    @Override
    public Properties getClientInfo() throws SQLException {
        return lent().getClientInfo();
    }

    @Override
    public Array createArrayOf(String typeName, Object[] elements) throws SQLException {
        return lent().createArrayOf(typeName, elements);
    }

    @Override
    public Struct createStruct(String typeName, Object[] attributes) throws SQLException {
        return lent().createStruct(typeName, attributes);
    }

    @Override
    public void setSchema(String schema) throws SQLException {
        lent().setSchema(schema);
    }

    @Override
    public String getSchema() throws SQLException {
        return lent().getSchema();
    }

    @Override
    public void setNetworkTimeout(Executor executor, int milliseconds) throws SQLException {
        lent().setNetworkTimeout(executor, milliseconds);
    }

    @Override
    public int getNetworkTimeout() throws SQLException {
        return lent().getNetworkTimeout();
    }

    @Override
    public void beginRequest() throws SQLException {
        lent().beginRequest();
    }

    @Override
    public void endRequest() throws SQLException {
        lent().endRequest();
    }

    @Override
    public boolean setShardingKeyIfValid(ShardingKey shardingKey, ShardingKey superShardingKey, int timeout)
            throws SQLException {
        return lent().setShardingKeyIfValid(shardingKey, superShardingKey, timeout);
    }

    @Override
    public boolean setShardingKeyIfValid(ShardingKey shardingKey, int timeout) throws SQLException {
        return lent().setShardingKeyIfValid(shardingKey, timeout);
    }

    @Override
    public void setShardingKey(ShardingKey shardingKey, ShardingKey superShardingKey) throws SQLException {
        lent().setShardingKey(shardingKey, superShardingKey);
    }

    @Override
    public void setShardingKey(ShardingKey shardingKey) throws SQLException {
        lent().setShardingKey(shardingKey);
    }
}
