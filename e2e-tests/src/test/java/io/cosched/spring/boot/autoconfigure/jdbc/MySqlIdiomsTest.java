package io.cosched.spring.boot.autoconfigure.jdbc;

/** {@link SpringIdiomsContract} with MySQL Connector/J ({@code jdbc:mysql:}), against the MariaDB server. */
class MySqlIdiomsTest extends MySqlFamilyIdiomsTest {

    @Override
    TestServer server() {
        return TestServer.MYSQL;
    }
}
