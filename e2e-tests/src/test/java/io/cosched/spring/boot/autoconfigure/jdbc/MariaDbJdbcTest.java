package io.cosched.spring.boot.autoconfigure.jdbc;

/** {@link JdbcOnTheLoopContract} with MariaDB Connector/J ({@code jdbc:mariadb:}). */
class MariaDbJdbcTest extends MySqlFamilyJdbcTest {

    @Override
    TestServer server() {
        return TestServer.MARIADB;
    }

    @Override
    String tlsParameters() {
        return "sslMode=trust"; // encrypted, the self-signed certificate trusted
    }
}
