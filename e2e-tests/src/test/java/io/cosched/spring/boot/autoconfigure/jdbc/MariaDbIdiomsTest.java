package io.cosched.spring.boot.autoconfigure.jdbc;

/** {@link SpringIdiomsContract} with MariaDB Connector/J ({@code jdbc:mariadb:}). */
class MariaDbIdiomsTest extends MySqlFamilyIdiomsTest {

    @Override
    TestServer server() {
        return TestServer.MARIADB;
    }
}
