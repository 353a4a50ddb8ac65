package io.cosched.sample;

import org.springframework.stereotype.Component;

/**
 * A switch that makes the database slower for the benchmarks: while it is on, each transaction of the account
 * service first holds its connection in PostgreSQL for the time set ({@code pg_sleep}), as a database under
 * someone else's load would. Off (0) unless turned on through {@link SlowDatabaseController}.
 */
@Component
class SlowDatabase {

    private volatile long millis;

    long millis() {
        return millis;
    }

    void set(long millis) {
        if (millis < 0 || millis > 60_000) {
            throw new IllegalArgumentException("ms: " + millis + " (expected: from 0 to 60000)");
        }
        this.millis = millis;
    }

    /** In a transaction: holds its connection for the time set, if any. */
    void hold(AccountRepository accounts) {
        long ms = millis;
        if (ms > 0) {
            accounts.sleepInDatabase(ms / 1000.0);
        }
    }
}
