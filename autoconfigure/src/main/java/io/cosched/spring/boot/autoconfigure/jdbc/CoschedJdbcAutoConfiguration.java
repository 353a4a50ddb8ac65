package io.cosched.spring.boot.autoconfigure.jdbc;

import com.zaxxer.hikari.HikariDataSource;
import io.cosched.IOManager;
import io.cosched.spring.boot.autoconfigure.CoschedAutoConfiguration;
import io.cosched.spring.jdbc.LoopBoundDataSource;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.jdbc.DataSourceUnwrapper;
import org.springframework.boot.jdbc.metadata.DataSourcePoolMetadataProvider;
import org.springframework.boot.jdbc.metadata.HikariDataSourcePoolMetadata;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;

/**
 * PostgreSQL over HikariCP on cosched's event loops: the application's Hikari {@code DataSource}
 * (Spring Boot's, from {@code spring.datasource.*}, or its own) becomes a {@link LoopBoundDataSource}
 * with one pool per loop, so that a coroutine's query is answered on its own loop. Off with
 * {@code cosched.jdbc.enabled=false}.
 */
@AutoConfiguration(after = CoschedAutoConfiguration.class)
@ConditionalOnClass(value = HikariDataSource.class, name = "org.postgresql.Driver")
@ConditionalOnBean(IOManager.class)
@ConditionalOnBooleanProperty(name = "cosched.jdbc.enabled", matchIfMissing = true)
public final class CoschedJdbcAutoConfiguration {

    @Bean
    static LoopBoundDataSourcePostProcessor coschedLoopBoundDataSourcePostProcessor(ObjectProvider<IOManager> io) {
        return new LoopBoundDataSourcePostProcessor(io);
    }

    /** Spring Boot's pool metadata ({@code jdbc.connections.*}) as the sum of the loops' pools. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(DataSourcePoolMetadataProvider.class)
    static final class PoolMetadataConfiguration {

        @Bean
        @Order(Ordered.HIGHEST_PRECEDENCE) // before Boot's Hikari provider, which would read one unstarted pool
        DataSourcePoolMetadataProvider coschedLoopBoundPoolMetadataProvider() {
            return dataSource -> {
                LoopBoundDataSource bound = DataSourceUnwrapper.unwrap(dataSource, LoopBoundDataSource.class);
                return bound == null ? null : new HikariDataSourcePoolMetadata(bound) {
                    @Override
                    public Integer getActive() {
                        return bound.getHikariPoolMXBean().getActiveConnections();
                    }

                    @Override
                    public Integer getIdle() {
                        return bound.getHikariPoolMXBean().getIdleConnections();
                    }
                };
            };
        }
    }
}
