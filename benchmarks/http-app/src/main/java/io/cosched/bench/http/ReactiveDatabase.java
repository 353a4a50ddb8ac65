package io.cosched.bench.http;

import io.r2dbc.pool.ConnectionPool;
import io.r2dbc.pool.ConnectionPoolConfiguration;
import io.r2dbc.postgresql.PostgresqlConnectionConfiguration;
import io.r2dbc.postgresql.PostgresqlConnectionFactory;
import io.r2dbc.spi.ConnectionFactory;
import java.net.URI;
import org.mariadb.r2dbc.MariadbConnectionConfiguration;
import org.mariadb.r2dbc.MariadbConnectionFactory;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.autoconfigure.condition.ConditionalOnExpression;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.client.ReactorResourceFactory;
import org.springframework.r2dbc.core.DatabaseClient;
import reactor.netty.resources.LoopResources;

/**
 * The reactive variant's database: an R2DBC pool on the server's own event loops (as WebClient is),
 * as large as the blocking variants' HikariCP pool, made from the same {@code spring.datasource.*}
 * the others use; PostgreSQL's R2DBC driver or MariaDB's, by the URL. Only for the reactive variant
 * run against one of those two.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnExpression(
        "'${bench.variant}'.equalsIgnoreCase('reactive') and ('${spring.datasource.url:}'.startsWith('jdbc:postgresql:')"
                + " or '${spring.datasource.url:}'.startsWith('jdbc:mariadb:'))")
class ReactiveDatabase {

    @Bean(destroyMethod = "dispose")
    ConnectionPool r2dbcPool(
            @Value("${spring.datasource.url}") String url,
            @Value("${spring.datasource.username}") String user,
            @Value("${spring.datasource.password}") String password,
            @Value("${spring.datasource.hikari.maximum-pool-size:10}") int size,
            ReactorResourceFactory resources) {
        URI u = URI.create(url.substring("jdbc:".length()));
        String database = u.getPath().substring(1);
        LoopResources loops = resources.getLoopResources();
        ConnectionFactory factory = switch (u.getScheme()) {
            case "postgresql" ->
                new PostgresqlConnectionFactory(PostgresqlConnectionConfiguration.builder()
                        .host(u.getHost())
                        .port(u.getPort() < 0 ? 5432 : u.getPort())
                        .database(database)
                        .username(user)
                        .password(password)
                        .loopResources(loops)
                        .build());
            case "mariadb" ->
                new MariadbConnectionFactory(MariadbConnectionConfiguration.builder()
                        .host(u.getHost())
                        .port(u.getPort() < 0 ? 3306 : u.getPort())
                        .database(database)
                        .username(user)
                        .password(password)
                        .loopResources(loops)
                        .build());
            default ->
                throw new IllegalStateException(
                        "spring.datasource.url: " + url + " (expected: jdbc:postgresql: or jdbc:mariadb:)");
        };
        return new ConnectionPool(ConnectionPoolConfiguration.builder(factory)
                .initialSize(size)
                .maxSize(size)
                .build());
    }

    @Bean
    DatabaseClient databaseClient(ConnectionPool pool) {
        return DatabaseClient.create(pool);
    }
}
