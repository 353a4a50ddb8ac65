package io.cosched.bench.http;

import io.r2dbc.pool.ConnectionPool;
import io.r2dbc.pool.ConnectionPoolConfiguration;
import org.mariadb.r2dbc.MariadbConnectionConfiguration;
import org.mariadb.r2dbc.MariadbConnectionFactory;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.autoconfigure.condition.ConditionalOnExpression;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.client.ReactorResourceFactory;
import org.springframework.r2dbc.core.DatabaseClient;

import java.net.URI;

/**
 * The reactive variant's MariaDB: MariaDB's R2DBC driver, a pool on the server's own event loops (as
 * {@link ReactivePostgres} for PostgreSQL), as large as the blocking variants' HikariCP pool, made from
 * the same {@code spring.datasource.*}. Only for the reactive variant run against MariaDB.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnExpression("'${bench.variant}'.equalsIgnoreCase('reactive') and '${spring.datasource.url:}'.startsWith('jdbc:mariadb:')")
class ReactiveMariadb {

    @Bean(destroyMethod = "dispose")
    ConnectionPool r2dbcPool(@Value("${spring.datasource.url}") String url, @Value("${spring.datasource.username}") String user,
            @Value("${spring.datasource.password}") String password,
            @Value("${spring.datasource.hikari.maximum-pool-size:10}") int size, ReactorResourceFactory loops) {
        URI u = URI.create(url.substring("jdbc:".length()));
        MariadbConnectionConfiguration config = MariadbConnectionConfiguration.builder()
                .host(u.getHost()).port(u.getPort() < 0 ? 3306 : u.getPort()).database(u.getPath().substring(1))
                .username(user).password(password).loopResources(loops.getLoopResources()).build();
        return new ConnectionPool(ConnectionPoolConfiguration.builder(new MariadbConnectionFactory(config))
                .initialSize(size).maxSize(size).build());
    }

    @Bean
    DatabaseClient databaseClient(ConnectionPool pool) {
        return DatabaseClient.create(pool);
    }
}
