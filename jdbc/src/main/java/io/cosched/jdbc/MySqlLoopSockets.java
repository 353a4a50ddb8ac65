package io.cosched.jdbc;

import com.mysql.cj.conf.PropertySet;
import com.mysql.cj.jdbc.JdbcConnection;
import com.mysql.cj.protocol.StandardSocketFactory;
import com.zaxxer.hikari.HikariDataSource;
import io.cosched.IOManager;
import io.cosched.net.LoopSocketFactory;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.net.Socket;
import java.net.SocketException;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.sql.Statement;
import java.util.logging.Logger;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;

/**
 * Sockets on an IOManager's loop for MySQL Connector/J: name this class in the driver's
 * {@code socketFactory} property. Connector/J configures, connects and (for TLS) wraps the socket as
 * it does its own; only the socket differs. The loop is the one {@link Connecting} names for the
 * connecting thread (the connection pools of {@link LoopBoundDataSource} do), else the loop of the coroutine that
 * connects on the first IOManager started.
 */
public final class MySqlLoopSockets extends StandardSocketFactory {

    private static final ThreadLocal<LoopSocketFactory> CONNECTING = new ThreadLocal<>();

    @Override
    protected Socket createSocket(PropertySet props) {
        LoopSocketFactory sockets = CONNECTING.get();
        try {
            return (sockets != null ? sockets : new LoopSocketFactory()).createSocket();
        } catch (SocketException e) {
            throw new UncheckedIOException(e); // Connector/J's hook declares none; it reports this as a connect failure
        }
    }

    /**
     * MySQL's cancel: {@code KILL QUERY <id>} over a new connection of the same connection pool's database, opened
     * on the canceller's loop; the statement fails with SQLState 70100 and the connection stays usable.
     */
    static void cancel(Connection connection, LoopBoundDataSource owner) throws SQLException {
        long id = connection.unwrap(JdbcConnection.class).getId();
        HikariDataSource pool = owner.poolOfCaller();
        DataSource connecting = pool.getDataSource();
        try (Connection killer = pool.getUsername() == null
                        ? connecting.getConnection()
                        : connecting.getConnection(pool.getUsername(), pool.getPassword());
                Statement s = killer.createStatement()) {
            s.execute("KILL QUERY " + id);
        }
    }

    /**
     * The {@code DataSource} of one loop's connection pool: the driver's, with the loop named for the thread
     * while it connects (HikariCP connects on a thread of its own, so the caller cannot be asked).
     */
    static final class Connecting implements DataSource {
        private final DataSource driver;
        private final LoopSocketFactory sockets;

        Connecting(DataSource driver, IOManager io, int loopIndex) {
            this.driver = driver;
            this.sockets = new LoopSocketFactory(io, loopIndex);
        }

        @Override
        public Connection getConnection() throws SQLException {
            return onThisLoop(driver::getConnection);
        }

        @Override
        public Connection getConnection(String username, String password) throws SQLException {
            return onThisLoop(() -> driver.getConnection(username, password));
        }

        private interface Connect {
            Connection connect() throws SQLException;
        }

        /** Connects with this connection pool's loop named for the calling thread, and the thread's own loop back after. */
        private Connection onThisLoop(Connect connect) throws SQLException {
            @Nullable LoopSocketFactory before = CONNECTING.get();
            CONNECTING.set(sockets);
            try {
                return connect.connect();
            } finally {
                if (before == null) {
                    CONNECTING.remove();
                } else {
                    CONNECTING.set(before);
                }
            }
        }

        @Override
        public PrintWriter getLogWriter() throws SQLException {
            return driver.getLogWriter();
        }

        @Override
        public void setLogWriter(PrintWriter out) throws SQLException {
            driver.setLogWriter(out);
        }

        @Override
        public void setLoginTimeout(int seconds) throws SQLException {
            driver.setLoginTimeout(seconds);
        }

        @Override
        public int getLoginTimeout() throws SQLException {
            return driver.getLoginTimeout();
        }

        @Override
        public Logger getParentLogger() throws SQLFeatureNotSupportedException {
            return driver.getParentLogger();
        }

        @Override
        public <T> T unwrap(Class<T> iface) throws SQLException {
            if (iface.isInstance(this)) {
                return iface.cast(this);
            }
            return driver.unwrap(iface);
        }

        @Override
        public boolean isWrapperFor(Class<?> iface) throws SQLException {
            return iface.isInstance(this) || driver.isWrapperFor(iface);
        }

        @Override
        public String toString() {
            return "MySqlLoopSockets.Connecting[" + sockets + "]";
        }
    }
}
