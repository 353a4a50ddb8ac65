package io.cosched.spring.boot.autoconfigure.jdbc;

/** {@link JdbcOnTheLoopContract} with MySQL Connector/J ({@code jdbc:mysql:}), against the MariaDB server. */
class MySqlJdbcTest extends MySqlFamilyJdbcTest {

    @Override
    TestServer server() {
        return TestServer.MYSQL;
    }

    @Override
    String tlsParameters() {
        return "sslMode=REQUIRED"; // encrypted, the certificate not verified
    }
}
