package io.cosched.spring.boot.autoconfigure.jdbc;

/** {@link JdbcOnTheLoopContract} with MariaDB Connector/J ({@code jdbc:mariadb:}). */
class MariaDbJdbcTest extends MySqlFamilyJdbcTest {

    @Override
    String scheme() {
        return "jdbc:mariadb:";
    }

    @Override
    String driverName() {
        return "MariaDB Connector/J";
    }

    @Override
    String tlsParameters() {
        return "sslMode=trust"; // encrypted, the self-signed certificate trusted
    }
}
