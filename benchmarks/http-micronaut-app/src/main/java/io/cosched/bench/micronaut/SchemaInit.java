package io.cosched.bench.micronaut;

import io.micronaut.context.annotation.Value;
import io.micronaut.context.event.StartupEvent;
import io.micronaut.runtime.event.annotation.EventListener;
import jakarta.inject.Singleton;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;

/** Creates the benchmark's table in H2 at start, unless told the table exists ({@code --spring.sql.init.mode=never}, as the harness says for PostgreSQL). */
@Singleton
public class SchemaInit {

    private final DataSource dataSource;
    private final String mode;

    public SchemaInit(DataSource dataSource, @Value("${spring.sql.init.mode:always}") String mode) {
        this.dataSource = dataSource;
        this.mode = mode;
    }

    @EventListener
    void onStartup(StartupEvent event) throws SQLException {
        if ("never".equals(mode)) {
            return;
        }
        try (Connection c = dataSource.getConnection(); Statement s = c.createStatement()) {
            s.execute("DROP TABLE IF EXISTS items");
            s.execute("CREATE TABLE items (id INT PRIMARY KEY, name VARCHAR(40) NOT NULL)");
            s.execute("INSERT INTO items SELECT x, 'item-' || x FROM SYSTEM_RANGE(1, 1000)");
        }
    }
}
