package io.cosched.jdbc;

import java.sql.Connection;
import java.sql.SQLException;
import org.postgresql.PGConnection;

/** What only the PostgreSQL driver needs; loaded only when a PostgreSQL connection pool cancels a statement. */
final class PostgresLoop {

    private PostgresLoop() {}

    /**
     * A PostgreSQL cancel request ({@link PGConnection#cancelQuery()}, over a connection of its own): the
     * driver fails the statement with SQLState 57014 and the connection stays usable.
     */
    static void cancel(Connection connection) throws SQLException {
        connection.unwrap(PGConnection.class).cancelQuery();
    }
}
