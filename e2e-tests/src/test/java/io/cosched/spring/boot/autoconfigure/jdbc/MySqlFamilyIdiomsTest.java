package io.cosched.spring.boot.autoconfigure.jdbc;

import java.util.List;

/**
 * {@link SpringIdiomsContract} against the MariaDB server {@code .ci/run} starts, through one of the two drivers that
 * speak its protocol (MariaDB Connector/J, MySQL Connector/J).
 */
abstract class MySqlFamilyIdiomsTest extends SpringIdiomsContract {

    @Override
    List<String> function() {
        return List.of(
                "DROP FUNCTION IF EXISTS idiom_add",
                "CREATE FUNCTION idiom_add(a INT, b INT) RETURNS INT DETERMINISTIC RETURN a + b");
    }
}
