package io.cosched.spring.boot.autoconfigure.jdbc;

import java.util.List;

/** {@link SpringIdiomsContract} with the PostgreSQL driver, against the server {@code .ci/run} starts. */
class PostgresIdiomsTest extends SpringIdiomsContract {

    @Override
    TestServer server() {
        return TestServer.POSTGRESQL;
    }

    @Override
    List<String> function() {
        return List.of(
                "CREATE OR REPLACE FUNCTION idiom_add(a INTEGER, b INTEGER) RETURNS INTEGER LANGUAGE SQL AS 'SELECT a + b'");
    }
}
