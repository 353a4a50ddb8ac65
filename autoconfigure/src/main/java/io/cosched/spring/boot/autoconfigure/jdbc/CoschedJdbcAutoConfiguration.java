package io.cosched.spring.boot.autoconfigure.jdbc;

import com.zaxxer.hikari.HikariDataSource;
import io.cosched.IOManager;
import io.cosched.jdbc.LoopBoundDataSource;
import io.cosched.spring.boot.autoconfigure.CoschedAutoConfiguration;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.binder.MeterBinder;
import javax.sql.DataSource;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.jdbc.DataSourceUnwrapper;
import org.springframework.boot.jdbc.metadata.DataSourcePoolMetadataProvider;
import org.springframework.boot.jdbc.metadata.HikariDataSourcePoolMetadata;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;

/**
 * PostgreSQL, MariaDB and MySQL over HikariCP on cosched's event loops: the application's Hikari {@code DataSource}
 * (Spring Boot's, from {@code spring.datasource.*}, or its own) becomes a {@link LoopBoundDataSource}
 * with one connection pool per loop, so that a coroutine's query is answered on its own loop. Off with
 * {@code cosched.jdbc.enabled=false}.
 */
@AutoConfiguration(after = CoschedAutoConfiguration.class)
@ConditionalOnClass({HikariDataSource.class, LoopBoundDataSource.class})
@ConditionalOnBean(IOManager.class)
@ConditionalOnBooleanProperty(name = "cosched.enabled", matchIfMissing = true)
@ConditionalOnBooleanProperty(name = "cosched.jdbc.enabled", matchIfMissing = true)
@EnableConfigurationProperties(CoschedJdbcProperties.class)
public final class CoschedJdbcAutoConfiguration {

    @Bean
    static LoopBoundDataSourcePostProcessor coschedLoopBoundDataSourcePostProcessor(
            ObjectProvider<IOManager> io, ObjectProvider<CoschedJdbcProperties> properties) {
        return new LoopBoundDataSourcePostProcessor(io, properties);
    }

    /**
     * The per-loop connection pools' cancellation numbers, tagged {@code pool=<pool name>}: interrupts held back until a
     * connection was back in its connection pool ({@code cosched.jdbc.interrupts.deferred}) and statements cancelled on
     * the server ({@code cosched.jdbc.statements.cancelled}).
     */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(MeterBinder.class)
    static final class MetersConfiguration {

        @Bean
        MeterBinder coschedJdbcMeters(ObjectProvider<DataSource> dataSources) {
            return registry -> dataSources.orderedStream().forEach(dataSource -> {
                LoopBoundDataSource bound = DataSourceUnwrapper.unwrap(dataSource, LoopBoundDataSource.class);
                if (bound == null) {
                    return;
                }
                Tags tags = Tags.of("pool", bound.sharedPoolName());
                FunctionCounter.builder(
                                "cosched.jdbc.interrupts.deferred", bound, LoopBoundDataSource::interruptsDeferred)
                        .description(
                                "Interrupts of coroutines held back until their pooled connection was back in its connection pool")
                        .tags(tags)
                        .register(registry);
                FunctionCounter.builder(
                                "cosched.jdbc.statements.cancelled", bound, LoopBoundDataSource::statementsCancelled)
                        .description(
                                "Statements cancelled on the server because they ran on past their coroutine's interrupt")
                        .tags(tags)
                        .register(registry);
            });
        }
    }

    /** Spring Boot's connection pool metadata ({@code jdbc.connections.*}) as the sum of the loops' connection pools. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(DataSourcePoolMetadataProvider.class)
    static final class PoolMetadataConfiguration {

        @Bean
        @Order(Ordered.HIGHEST_PRECEDENCE) // before Boot's Hikari provider, which would read one unstarted connection
        // pool
        DataSourcePoolMetadataProvider coschedLoopBoundPoolMetadataProvider() {
            return dataSource -> {
                LoopBoundDataSource bound = DataSourceUnwrapper.unwrap(dataSource, LoopBoundDataSource.class);
                return bound == null
                        ? null
                        : new HikariDataSourcePoolMetadata(bound) {
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
