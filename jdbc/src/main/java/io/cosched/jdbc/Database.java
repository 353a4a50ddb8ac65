package io.cosched.jdbc;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import com.zaxxer.hikari.util.DriverDataSource;
import io.cosched.IOManager;
import io.cosched.net.LoopSocketFactory;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.Locale;
import org.jspecify.annotations.Nullable;

/**
 * The databases whose JDBC drivers cosched puts on its loops, and for each how a connection pool's connections
 * are bound to one loop and how a statement under way is cancelled on the server. The driver-specific
 * code sits in classes of its own ({@link PostgresLoop}, {@link MariaDbLoopSockets},
 * {@link MySqlLoopSockets}), loaded only when that database is in use, so that an application needs
 * only its own driver.
 */
enum Database {

    /** The PostgreSQL driver: its {@code socketFactory} and {@code socketFactoryArg} URL parameters. */
    POSTGRESQL("jdbc:postgresql:", "org.postgresql.Driver", "SHOW max_connections") {
        @Override
        void bind(HikariDataSource pool, HikariConfig template, IOManager io, int loopIndex) {
            pool.setJdbcUrl(withParameters(
                    template.getJdbcUrl(),
                    "socketFactory=" + LoopSocketFactory.class.getName() + "&socketFactoryArg="
                            + encode(LoopSocketFactory.argument(io, loopIndex))));
        }

        @Override
        void cancel(Connection connection, LoopBoundDataSource owner) throws SQLException {
            PostgresLoop.cancel(connection);
        }
    },

    /**
     * MariaDB Connector/J: its {@code socketFactory} option names {@link MariaDbLoopSockets}, which reads
     * the loop from the {@code coschedLoop} option (the driver keeps options it does not know for it).
     */
    MARIADB("jdbc:mariadb:", "org.mariadb.jdbc.Driver", "SELECT @@max_connections") {
        @Override
        void bind(HikariDataSource pool, HikariConfig template, IOManager io, int loopIndex) {
            pool.setJdbcUrl(withParameters(
                    template.getJdbcUrl(),
                    "socketFactory=" + MariaDbLoopSockets.class.getName() + "&" + MariaDbLoopSockets.LOOP_OPTION + "="
                            + encode(LoopSocketFactory.argument(io, loopIndex))));
        }

        @Override
        void cancel(Connection connection, LoopBoundDataSource owner) throws SQLException {
            MariaDbLoopSockets.cancel(connection);
        }
    },

    /**
     * MySQL Connector/J: its {@code socketFactory} property names {@link MySqlLoopSockets}. Connector/J
     * hands a socket factory no option it does not know, so the loop reaches it from the connection pool's
     * {@code DataSource}, which names it for the thread that connects.
     */
    MYSQL("jdbc:mysql:", "com.mysql.cj.jdbc.Driver", "SELECT @@max_connections") {
        @Override
        void bind(HikariDataSource pool, HikariConfig template, IOManager io, int loopIndex) {
            String url = withParameters(template.getJdbcUrl(), "socketFactory=" + MySqlLoopSockets.class.getName());
            pool.setJdbcUrl(url);
            pool.setDataSource(new MySqlLoopSockets.Connecting(
                    new DriverDataSource(
                            url,
                            template.getDriverClassName(),
                            template.getDataSourceProperties(),
                            template.getUsername(),
                            template.getPassword()),
                    io,
                    loopIndex));
        }

        @Override
        void cancel(Connection connection, LoopBoundDataSource owner) throws SQLException {
            MySqlLoopSockets.cancel(connection, owner);
        }
    };

    private final String urlPrefix;
    private final String driverClassName;
    private final String maxConnectionsQuery;

    Database(String urlPrefix, String driverClassName, String maxConnectionsQuery) {
        this.urlPrefix = urlPrefix;
        this.driverClassName = driverClassName;
        this.maxConnectionsQuery = maxConnectionsQuery;
    }

    /** How many connections the server takes in all (its {@code max_connections}), asked over {@code connection}. */
    int maxConnections(Connection connection) throws SQLException {
        try (java.sql.Statement s = connection.createStatement();
                java.sql.ResultSet rs = s.executeQuery(maxConnectionsQuery)) {
            if (!rs.next()) {
                throw new SQLException(maxConnectionsQuery + " answered no row");
            }
            return Integer.parseInt(rs.getString(1).trim());
        } catch (NumberFormatException e) {
            throw new SQLException(maxConnectionsQuery + " answered no number", e);
        }
    }

    /** The driver's class, as Spring Boot and HikariCP name it. */
    String driverClassName() {
        return driverClassName;
    }

    /** The URL's scheme, such as {@code jdbc:mariadb:}. */
    String urlPrefix() {
        return urlPrefix;
    }

    /** Makes {@code pool}, a copy of {@code template}, open its connections on loop {@code loop} of {@code io}. */
    abstract void bind(HikariDataSource pool, HikariConfig template, IOManager io, int loopIndex);

    /** Asks the server to end the statement {@code connection} runs now; blocks for a round trip or two. */
    abstract void cancel(Connection connection, LoopBoundDataSource owner) throws SQLException;

    /**
     * The database of a connection pool configured by {@code url} and, if set, {@code driverClassName}: a named
     * driver with a URL of its own scheme ({@code jdbc:mysql:} URLs with MariaDB's driver are MariaDB's),
     * else the URL's scheme; {@code null} for any other database or combination.
     */
    static @Nullable Database of(@Nullable String url, @Nullable String driverClassName) {
        if (driverClassName != null) {
            for (Database d : values()) {
                if (d.driverClassName.equals(driverClassName)
                        && url != null
                        && (url.startsWith(d.urlPrefix) || d == MARIADB && url.startsWith(MYSQL.urlPrefix))) {
                    return d;
                }
            }
            return null;
        }
        if (url != null) {
            for (Database d : values()) {
                if (url.startsWith(d.urlPrefix)) {
                    return d;
                }
            }
        }
        return null;
    }

    /** Whether {@code url} or the driver properties name a socket factory already. */
    static boolean namesSocketFactory(HikariConfig config) {
        String url = config.getJdbcUrl();
        return url != null && url.toLowerCase(Locale.ROOT).contains("socketfactory=")
                || config.getDataSourceProperties().containsKey("socketFactory");
    }

    static String withParameters(String url, String parameters) {
        return url + (url.indexOf('?') >= 0 ? "&" : "?") + parameters;
    }

    private static String encode(String value) {
        return URLEncoder.encode(value, StandardCharsets.UTF_8);
    }
}
