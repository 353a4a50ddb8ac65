package io.cosched.jdbc;

import io.cosched.Coroutines;
import io.cosched.Shield;
import io.cosched.Timer;
import org.jspecify.annotations.Nullable;

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

/**
 * The connection a borrower gets from {@link LoopBoundDataSource}: HikariCP's, and what the borrow holds
 * until it is closed. Every JDBC call goes straight to Hikari's connection; closing (or aborting) it gives
 * back three things: the connection to Hikari, the turn in the loop's {@link LoopGate}, and the coroutine's
 * {@link Shield}.
 *
 * <p>The shield is what keeps a cancelled request from breaking the connection: while the borrower holds it,
 * an interrupt of the borrowing coroutine (its client went away, its timeout passed) does not reach its
 * socket read, which would close the socket and leave the pool a broken connection. The statement under way
 * finishes, the connection goes back to the pool intact, and then the coroutine is interrupted. A statement
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
    private final LoopGate gate;
    private final StatementCanceller canceller;
    private final Shield shield;
    @SuppressWarnings("unused") // through STATE
    private volatile int state;
    private volatile @Nullable Timer cancelTimer;
    private volatile @Nullable CompletableFuture<Void> cancelDone;

    /**
     * Takes over the turn in {@code gate} and opens the calling coroutine's shield, before HikariCP is asked
     * for the connection: Hikari may check an idle connection with a query before it lends it.
     */
    BorrowedConnection(LoopGate gate, StatementCanceller canceller) {
        this.gate = gate;
        this.canceller = canceller;
        this.shield = Coroutines.shield(this::interrupted);
    }

    /** Hikari lent {@code c}: this borrow is the borrower's connection now. */
    BorrowedConnection lend(Connection c) {
        this.connection = c;
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

    /** Hikari's connection behind {@code c}, or {@code c} itself. */
    static Connection unwrapBorrowed(Connection c) {
        return c instanceof BorrowedConnection b && b.connection != null ? b.connection : c;
    }

    /** The borrowing coroutine is being interrupted (on the interrupting thread: must not block). */
    private void interrupted() {
        canceller.deferred();
        cancelTimer = canceller.schedule(this::cancelStatement);
    }

    /** In a coroutine of its own: asks the server to end the statement under way, unless the borrow ended first. */
    private void cancelStatement() {
        CompletableFuture<Void> done = new CompletableFuture<>();
        cancelDone = done; // before the state says so: a close that sees CANCELLING waits for it
        if (!STATE.compareAndSet(this, IN_USE, CANCELLING)) {
            return; // returned: the connection may be someone else's by now
        }
        try {
            Connection c = connection;
            if (c != null) { // else Hikari is still finding one: there is no statement of ours to cancel
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
                connection.close();
            } finally {
                giveBack();
            }
        }
    }

    @Override
    public void abort(Executor executor) throws SQLException {
        if (end()) {
            try {
                connection.abort(executor);
            } finally {
                giveBack();
            }
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
        for (;;) {
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
            gate.exit();
        } finally {
            shield.close();
        }
    }

    @Override
    public boolean isClosed() throws SQLException {
        return state == RETURNED || connection.isClosed();
    }

    @Override
    public <T> T unwrap(Class<T> type) throws SQLException {
        return type.isInstance(this) ? type.cast(this) : connection.unwrap(type);
    }

    @Override
    public boolean isWrapperFor(Class<?> type) throws SQLException {
        return type.isInstance(this) || connection.isWrapperFor(type);
    }

    @Override
    public String toString() {
        return "Borrowed" + connection;
    }

    @Override
    public Statement createStatement() throws SQLException {
        return connection.createStatement();
    }

    @Override
    public PreparedStatement prepareStatement(String sql) throws SQLException {
        return connection.prepareStatement(sql);
    }

    @Override
    public CallableStatement prepareCall(String sql) throws SQLException {
        return connection.prepareCall(sql);
    }

    @Override
    public String nativeSQL(String sql) throws SQLException {
        return connection.nativeSQL(sql);
    }

    @Override
    public void setAutoCommit(boolean autoCommit) throws SQLException {
        connection.setAutoCommit(autoCommit);
    }

    @Override
    public boolean getAutoCommit() throws SQLException {
        return connection.getAutoCommit();
    }

    @Override
    public void commit() throws SQLException {
        connection.commit();
    }

    @Override
    public void rollback() throws SQLException {
        connection.rollback();
    }

    @Override
    public DatabaseMetaData getMetaData() throws SQLException {
        return connection.getMetaData();
    }

    @Override
    public void setReadOnly(boolean readOnly) throws SQLException {
        connection.setReadOnly(readOnly);
    }

    @Override
    public boolean isReadOnly() throws SQLException {
        return connection.isReadOnly();
    }

    @Override
    public void setCatalog(String catalog) throws SQLException {
        connection.setCatalog(catalog);
    }

    @Override
    public String getCatalog() throws SQLException {
        return connection.getCatalog();
    }

    @Override
    public void setTransactionIsolation(int level) throws SQLException {
        connection.setTransactionIsolation(level);
    }

    @Override
    public int getTransactionIsolation() throws SQLException {
        return connection.getTransactionIsolation();
    }

    @Override
    public SQLWarning getWarnings() throws SQLException {
        return connection.getWarnings();
    }

    @Override
    public void clearWarnings() throws SQLException {
        connection.clearWarnings();
    }

    @Override
    public Statement createStatement(int resultSetType, int resultSetConcurrency) throws SQLException {
        return connection.createStatement(resultSetType, resultSetConcurrency);
    }

    @Override
    public PreparedStatement prepareStatement(String sql, int resultSetType, int resultSetConcurrency) throws SQLException {
        return connection.prepareStatement(sql, resultSetType, resultSetConcurrency);
    }

    @Override
    public CallableStatement prepareCall(String sql, int resultSetType, int resultSetConcurrency) throws SQLException {
        return connection.prepareCall(sql, resultSetType, resultSetConcurrency);
    }

    @Override
    public Map<String, Class<?>> getTypeMap() throws SQLException {
        return connection.getTypeMap();
    }

    @Override
    public void setTypeMap(Map<String, Class<?>> map) throws SQLException {
        connection.setTypeMap(map);
    }

    @Override
    public void setHoldability(int holdability) throws SQLException {
        connection.setHoldability(holdability);
    }

    @Override
    public int getHoldability() throws SQLException {
        return connection.getHoldability();
    }

    @Override
    public Savepoint setSavepoint() throws SQLException {
        return connection.setSavepoint();
    }

    @Override
    public Savepoint setSavepoint(String name) throws SQLException {
        return connection.setSavepoint(name);
    }

    @Override
    public void rollback(Savepoint savepoint) throws SQLException {
        connection.rollback(savepoint);
    }

    @Override
    public void releaseSavepoint(Savepoint savepoint) throws SQLException {
        connection.releaseSavepoint(savepoint);
    }

    @Override
    public Statement createStatement(int resultSetType, int resultSetConcurrency, int resultSetHoldability) throws SQLException {
        return connection.createStatement(resultSetType, resultSetConcurrency, resultSetHoldability);
    }

    @Override
    public PreparedStatement prepareStatement(String sql, int resultSetType, int resultSetConcurrency, int resultSetHoldability) throws SQLException {
        return connection.prepareStatement(sql, resultSetType, resultSetConcurrency, resultSetHoldability);
    }

    @Override
    public CallableStatement prepareCall(String sql, int resultSetType, int resultSetConcurrency, int resultSetHoldability) throws SQLException {
        return connection.prepareCall(sql, resultSetType, resultSetConcurrency, resultSetHoldability);
    }

    @Override
    public PreparedStatement prepareStatement(String sql, int autoGeneratedKeys) throws SQLException {
        return connection.prepareStatement(sql, autoGeneratedKeys);
    }

    @Override
    public PreparedStatement prepareStatement(String sql, int[] columnIndexes) throws SQLException {
        return connection.prepareStatement(sql, columnIndexes);
    }

    @Override
    public PreparedStatement prepareStatement(String sql, String[] columnNames) throws SQLException {
        return connection.prepareStatement(sql, columnNames);
    }

    @Override
    public Clob createClob() throws SQLException {
        return connection.createClob();
    }

    @Override
    public Blob createBlob() throws SQLException {
        return connection.createBlob();
    }

    @Override
    public NClob createNClob() throws SQLException {
        return connection.createNClob();
    }

    @Override
    public SQLXML createSQLXML() throws SQLException {
        return connection.createSQLXML();
    }

    @Override
    public boolean isValid(int timeout) throws SQLException {
        return connection.isValid(timeout);
    }

    @Override
    public void setClientInfo(String name, String value) throws SQLClientInfoException {
        connection.setClientInfo(name, value);
    }

    @Override
    public void setClientInfo(Properties properties) throws SQLClientInfoException {
        connection.setClientInfo(properties);
    }

    @Override
    public String getClientInfo(String name) throws SQLException {
        return connection.getClientInfo(name);
    }

    @Override
    public Properties getClientInfo() throws SQLException {
        return connection.getClientInfo();
    }

    @Override
    public Array createArrayOf(String typeName, Object[] elements) throws SQLException {
        return connection.createArrayOf(typeName, elements);
    }

    @Override
    public Struct createStruct(String typeName, Object[] attributes) throws SQLException {
        return connection.createStruct(typeName, attributes);
    }

    @Override
    public void setSchema(String schema) throws SQLException {
        connection.setSchema(schema);
    }

    @Override
    public String getSchema() throws SQLException {
        return connection.getSchema();
    }

    @Override
    public void setNetworkTimeout(Executor executor, int milliseconds) throws SQLException {
        connection.setNetworkTimeout(executor, milliseconds);
    }

    @Override
    public int getNetworkTimeout() throws SQLException {
        return connection.getNetworkTimeout();
    }

    @Override
    public void beginRequest() throws SQLException {
        connection.beginRequest();
    }

    @Override
    public void endRequest() throws SQLException {
        connection.endRequest();
    }

    @Override
    public boolean setShardingKeyIfValid(ShardingKey shardingKey, ShardingKey superShardingKey, int timeout) throws SQLException {
        return connection.setShardingKeyIfValid(shardingKey, superShardingKey, timeout);
    }

    @Override
    public boolean setShardingKeyIfValid(ShardingKey shardingKey, int timeout) throws SQLException {
        return connection.setShardingKeyIfValid(shardingKey, timeout);
    }

    @Override
    public void setShardingKey(ShardingKey shardingKey, ShardingKey superShardingKey) throws SQLException {
        connection.setShardingKey(shardingKey, superShardingKey);
    }

    @Override
    public void setShardingKey(ShardingKey shardingKey) throws SQLException {
        connection.setShardingKey(shardingKey);
    }
}
