package io.cosched.spring.boot.autoconfigure.jdbc;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;

/**
 * {@link JdbcOnTheLoopContract} against the MariaDB server {@code .ci/run} starts, through one of the
 * two drivers that speak its protocol (MariaDB Connector/J, MySQL Connector/J).
 */
abstract class MySqlFamilyJdbcTest extends JdbcOnTheLoopContract {

    @Override
    String tagParameters() {
        return "connectTimeout=5000"; // the tests' connections are told apart by user, not by a tag
    }

    @Override
    String selectIntParameter() {
        return "SELECT CAST(? AS SIGNED)";
    }

    @Override
    String sleep(String seconds) {
        return "SELECT SLEEP(" + seconds + ")";
    }

    @Override
    String connectionId() {
        return "SELECT CONNECTION_ID()";
    }

    @Override
    String connectionIdAfter(String seconds) {
        return "SELECT CONNECTION_ID(), SLEEP(" + seconds + ")";
    }

    @Override
    String cancelledSqlState() {
        return "70100";
    }

    @Override
    int terminateTaggedConnections(Connection admin) throws Exception {
        List<Long> ids = new ArrayList<>();
        try (Statement s = admin.createStatement();
                ResultSet rs = s.executeQuery("SELECT ID FROM information_schema.PROCESSLIST WHERE USER = '" + user()
                        + "' AND ID <> CONNECTION_ID()")) {
            while (rs.next()) {
                ids.add(rs.getLong(1));
            }
        }
        int killed = 0;
        for (long id : ids) {
            try (Statement s = admin.createStatement()) {
                s.execute("KILL " + id);
                killed++;
            } catch (java.sql.SQLException gone) {
                // it ended by itself meanwhile
            }
        }
        return killed;
    }

    @Override
    boolean encrypted(Connection connection) throws Exception {
        try (Statement s = connection.createStatement();
                ResultSet rs = s.executeQuery("SHOW SESSION STATUS LIKE 'Ssl_cipher'")) {
            return rs.next() && !rs.getString(2).isEmpty();
        }
    }

    @Override
    String socketTimeoutParameters() {
        return "socketTimeout=500"; // milliseconds
    }
}
