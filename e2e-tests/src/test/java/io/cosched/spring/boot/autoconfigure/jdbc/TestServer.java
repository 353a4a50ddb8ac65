package io.cosched.spring.boot.autoconfigure.jdbc;

/**
 * The real servers {@code .ci/run} starts on loopback, through each driver the JDBC tests run: PostgreSQL's, and
 * MariaDB Connector/J and MySQL Connector/J against the MariaDB server. Found through the environment; {@link #url()}
 * is {@code null} where none is set, and the tests skip with the reason.
 */
enum TestServer {
    POSTGRESQL("PostgreSQL", "COSCHED_TEST_POSTGRES", "jdbc:postgresql:"),
    MARIADB("MariaDB Connector/J", "COSCHED_TEST_MARIADB", "jdbc:mariadb:"),
    MYSQL("MySQL Connector/J", "COSCHED_TEST_MARIADB", "jdbc:mysql:");

    private final String driverName;
    private final String environment;
    private final String scheme;

    TestServer(String driverName, String environment, String scheme) {
        this.driverName = driverName;
        this.environment = environment;
        this.scheme = scheme;
    }

    /** The server's JDBC URL with this driver's scheme, or {@code null} when no server is configured. */
    String url() {
        String url = System.getenv(environment + "_URL");
        return url == null ? null : url.replaceFirst("^jdbc:[a-z]+:", scheme);
    }

    String user() {
        return System.getenv().getOrDefault(environment + "_USER", "cosched");
    }

    String password() {
        return System.getenv().getOrDefault(environment + "_PASSWORD", "cosched");
    }

    /** The shell command that restarts the server, or {@code null}. */
    String restart() {
        return System.getenv(environment + "_RESTART");
    }

    String driverName() {
        return driverName;
    }
}
