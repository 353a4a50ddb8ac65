package io.cosched.jdbc;

import io.cosched.net.LoopSocketFactory;
import java.io.IOException;
import java.net.InetAddress;
import java.net.Socket;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.SQLException;
import org.mariadb.jdbc.Configuration;
import org.mariadb.jdbc.util.ConfigurableSocketFactory;

/**
 * Sockets on an IOManager's loop for MariaDB Connector/J: name this class in the driver's
 * {@code socketFactory} option and the loop in the {@code coschedLoop} option
 * ({@code <IOManager name>/<loop index>}, or just the name for the loop of the coroutine that
 * connects; without it, the first IOManager started). {@link LoopBoundDataSource} sets both. The
 * driver layers TLS over the socket as over its own.
 */
public final class MariaDbLoopSockets extends ConfigurableSocketFactory {

    /** The driver option that names the loop. */
    public static final String LOOP_OPTION = "coschedLoop";

    private LoopSocketFactory sockets = new LoopSocketFactory();

    /** Called by the driver once, before it asks for a socket. */
    @Override
    public void setConfiguration(Configuration conf, String host) {
        String loop = conf.nonMappedOptions().getProperty(LOOP_OPTION);
        // the driver hands on an option it does not know as written in the URL, still encoded
        sockets = loop == null
                ? new LoopSocketFactory()
                : new LoopSocketFactory(URLDecoder.decode(loop, StandardCharsets.UTF_8));
    }

    @Override
    public Socket createSocket() throws IOException {
        return sockets.createSocket();
    }

    @Override
    public Socket createSocket(String host, int port) throws IOException {
        return sockets.createSocket(host, port);
    }

    @Override
    public Socket createSocket(String host, int port, InetAddress localHost, int localPort) throws IOException {
        return sockets.createSocket(host, port, localHost, localPort);
    }

    @Override
    public Socket createSocket(InetAddress host, int port) throws IOException {
        return sockets.createSocket(host, port);
    }

    @Override
    public Socket createSocket(InetAddress address, int port, InetAddress localAddress, int localPort)
            throws IOException {
        return sockets.createSocket(address, port, localAddress, localPort);
    }

    /**
     * MariaDB's own cancel: a {@code KILL QUERY} over a new connection; the statement fails with
     * SQLState 70100 and the connection stays usable.
     */
    static void cancel(Connection connection) throws SQLException {
        connection.unwrap(org.mariadb.jdbc.Connection.class).cancelCurrentQuery();
    }

    @Override
    public String toString() {
        return "MariaDbLoopSockets[" + sockets + "]";
    }
}
