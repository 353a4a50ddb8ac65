package io.cosched.spring.boot.autoconfigure.jdbc;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;

/** {@link JdbcOnTheLoopContract} with the PostgreSQL driver, against the server {@code .ci/run} starts. */
class PostgresJdbcTest extends JdbcOnTheLoopContract {

    private static final String APP = "cosched-jdbc-test";

    @Override
    TestServer server() {
        return TestServer.POSTGRESQL;
    }

    @Override
    String tagParameters() {
        return "ApplicationName=" + APP;
    }

    @Override
    String selectIntParameter() {
        return "SELECT ?::int";
    }

    @Override
    String sleep(String seconds) {
        return "SELECT pg_sleep(" + seconds + ")";
    }

    @Override
    String connectionId() {
        return "SELECT pg_backend_pid()";
    }

    @Override
    String connectionIdAfter(String seconds) {
        return "SELECT pg_backend_pid() FROM pg_sleep(" + seconds + ")";
    }

    @Override
    String cancelledSqlState() {
        return "57014";
    }

    @Override
    int terminateTaggedConnections(Connection admin) throws Exception {
        try (Statement s = admin.createStatement();
                ResultSet rs = s.executeQuery("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                        + "WHERE application_name = '" + APP + "'")) {
            rs.next();
            return rs.getInt(1);
        }
    }

    @Override
    String tlsParameters() {
        return "sslmode=require";
    }

    @Override
    boolean encrypted(Connection connection) throws Exception {
        try (Statement s = connection.createStatement();
                ResultSet rs = s.executeQuery("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()")) {
            return rs.next() && rs.getBoolean(1);
        }
    }

    @Override
    String socketTimeoutParameters() {
        return "socketTimeout=1"; // seconds
    }
}
