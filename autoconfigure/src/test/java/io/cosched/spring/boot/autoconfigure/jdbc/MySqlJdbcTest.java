package io.cosched.spring.boot.autoconfigure.jdbc;

/** {@link JdbcOnTheLoopContract} with MySQL Connector/J ({@code jdbc:mysql:}), against the MariaDB server. */
class MySqlJdbcTest extends MySqlFamilyJdbcTest {

    @Override
    String scheme() {
        return "jdbc:mysql:";
    }

    @Override
    String driverName() {
        return "MySQL Connector/J";
    }

    @Override
    String tlsParameters() {
        return "sslMode=REQUIRED"; // encrypted, the certificate not verified
    }
}
