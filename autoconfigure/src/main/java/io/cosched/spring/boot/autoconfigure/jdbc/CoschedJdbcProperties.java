package io.cosched.spring.boot.autoconfigure.jdbc;

import io.cosched.Arguments;
import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;

/** The {@code cosched.jdbc.*} properties: JDBC connections on cosched's event loops. */
@ConfigurationProperties("cosched.jdbc")
public class CoschedJdbcProperties {

    /**
     * Whether a HikariCP DataSource for PostgreSQL, MariaDB or MySQL gets its connections on cosched's event
     * loops: one connection pool per loop behind the one DataSource, and a coroutine borrows from the connection pool of its own loop.
     */
    private boolean enabled = true;

    /**
     * How long a statement may run on after the coroutine that runs it was interrupted (its request was
     * cancelled or timed out) before PostgreSQL is asked to cancel it. The interrupt itself waits until the
     * connection is back in its connection pool, so that it never breaks the connection.
     */
    private Duration cancelStatementsAfter = Duration.ofSeconds(1);

    public boolean isEnabled() {
        return enabled;
    }

    public void setEnabled(boolean enabled) {
        this.enabled = enabled;
    }

    public Duration getCancelStatementsAfter() {
        return cancelStatementsAfter;
    }

    public void setCancelStatementsAfter(Duration cancelStatementsAfter) {
        this.cancelStatementsAfter = Arguments.nonNegative("cancel-statements-after", cancelStatementsAfter);
    }
}
