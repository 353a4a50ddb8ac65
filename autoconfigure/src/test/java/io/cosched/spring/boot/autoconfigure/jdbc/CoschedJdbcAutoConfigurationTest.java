package io.cosched.spring.boot.autoconfigure.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import io.cosched.IOManager;
import io.cosched.jdbc.LoopBoundDataSource;
import io.cosched.spring.boot.autoconfigure.CoschedAutoConfiguration;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.sql.SQLException;
import java.time.Duration;
import java.util.concurrent.ExecutionException;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.JdbcClientAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.JdbcTemplateAutoConfiguration;
import org.springframework.boot.jdbc.metadata.DataSourcePoolMetadata;
import org.springframework.boot.jdbc.metadata.DataSourcePoolMetadataProvider;
import org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.simple.JdbcClient;

/**
 * Spring Boot's Hikari DataSource as one pool per loop. A PostgreSQL URL where no server listens is enough to
 * see the pools made and which one a coroutine borrows from; H2 is the database cosched leaves alone
 * ({@code PostgresJdbcTest} and the others run queries against real servers).
 */
@Timeout(60)
class CoschedJdbcAutoConfigurationTest {

    // nothing listens on port 1: a pool that starts fails to connect, and no test waits for it to succeed
    private static final String POSTGRES = "jdbc:postgresql://127.0.0.1:1/app";

    /** An application that left cosched's own auto-configuration out: cosched on, but no IOManager. */
    private final ApplicationContextRunner withoutIOManager = new ApplicationContextRunner()
            .withPropertyValues(
                    "cosched.io.threads=2",
                    "cosched.scheduler.threads=1",
                    "cosched.stall.threshold=0",
                    "spring.datasource.hikari.pool-name=orders",
                    "spring.datasource.hikari.maximum-pool-size=4")
            .withConfiguration(
                    AutoConfigurations.of(CoschedJdbcAutoConfiguration.class, DataSourceAutoConfiguration.class));

    private final ApplicationContextRunner runner =
            withoutIOManager.withConfiguration(AutoConfigurations.of(CoschedAutoConfiguration.class));

    private final ApplicationContextRunner postgres = runner.withPropertyValues("spring.datasource.url=" + POSTGRES);

    @Test
    void springBootsHikariDataSourceBecomesOnePoolPerLoopThatStartsOnFirstUse() {
        postgres.run(context -> {
            DataSource dataSource = context.getBean(DataSource.class);
            assertThat(dataSource).isInstanceOf(LoopBoundDataSource.class);
            LoopBoundDataSource bound = (LoopBoundDataSource) dataSource;
            assertThat(bound.toString())
                    .contains("on " + context.getBean(IOManager.class).name());
            assertThat(bound.pools())
                    .extracting(HikariDataSource::getPoolName)
                    .containsExactly("orders-loop0", "orders-loop1");
            // Spring Boot's spring.datasource.hikari.* reach every pool: the maximum is shared out
            assertThat(bound.pools())
                    .extracting(HikariDataSource::getMaximumPoolSize)
                    .containsExactly(2, 2);
            assertThat(bound.isRunning()).isFalse();
        });
    }

    @Test
    void aCoroutineBorrowsFromThePoolOfItsOwnLoop() {
        // the pool starts without a first connection (fail timeout -1), and its borrow gives up soon
        postgres.withPropertyValues(
                        "spring.datasource.hikari.initialization-fail-timeout=-1",
                        "spring.datasource.hikari.connection-timeout=250")
                .run(context -> {
                    IOManager io = context.getBean(IOManager.class);
                    LoopBoundDataSource bound = context.getBean(LoopBoundDataSource.class);
                    assertThatThrownBy(() ->
                                    io.spawnOn(1, () -> bound.getConnection()).join())
                            .isInstanceOf(ExecutionException.class)
                            .cause()
                            .isInstanceOf(SQLException.class);
                    assertThat(bound.pools().get(1).getHikariPoolMXBean())
                            .as("loop 1's pool started")
                            .isNotNull();
                    assertThat(bound.pools().get(0).getHikariPoolMXBean())
                            .as("loop 0's pool")
                            .isNull();
                });
    }

    @Test
    void aDataSourceOfTheApplicationsOwnGoesOnTheLoopsToo() {
        runner.withUserConfiguration(OwnHikari.class).run(context -> {
            assertThat(context.getBean(DataSource.class)).isInstanceOf(LoopBoundDataSource.class);
            assertThat(((LoopBoundDataSource) context.getBean(DataSource.class)).sharedPoolName())
                    .isEqualTo("mine");
        });
    }

    @Test
    void aLoopBoundDataSourceOfTheApplicationsOwnIsLeftAsItIs() {
        runner.withUserConfiguration(OwnLoopBound.class)
                .run(context -> assertThat(context.getBean(DataSource.class))
                        .isSameAs(context.getBean(OwnLoopBound.class).made));
    }

    @Test
    void anotherDatabaseIsLeftToSpringBootsPoolAndWorks() {
        // no URL: Spring Boot's embedded H2, which cosched cannot put on its loops
        runner.withConfiguration(
                        AutoConfigurations.of(JdbcTemplateAutoConfiguration.class, JdbcClientAutoConfiguration.class))
                .run(context -> {
                    assertThat(context.getBean(DataSource.class)).isExactlyInstanceOf(HikariDataSource.class);
                    IOManager io = context.getBean(IOManager.class);
                    JdbcClient jdbc = context.getBean(JdbcClient.class);
                    assertThat(io.spawn(() -> jdbc.sql("SELECT 41 + 1")
                                            .query(Integer.class)
                                            .single())
                                    .join())
                            .isEqualTo(42);
                });
    }

    @Test
    void theLoopsPoolsAreSpringBootsPoolMetadataAndMeters() {
        postgres.withBean(SimpleMeterRegistry.class, SimpleMeterRegistry::new)
                .withConfiguration(AutoConfigurations.of(MetricsAutoConfiguration.class))
                .run(context -> {
                    LoopBoundDataSource bound = context.getBean(LoopBoundDataSource.class);
                    DataSourcePoolMetadata metadata = context.getBean(
                                    "coschedLoopBoundPoolMetadataProvider", DataSourcePoolMetadataProvider.class)
                            .getDataSourcePoolMetadata(bound);
                    assertThat(metadata.getMax()).isEqualTo(4);
                    // the loops' pools, none started: not the one unstarted pool Spring Boot's provider would read
                    assertThat(metadata.getActive()).isZero();
                    assertThat(metadata.getIdle()).isZero();
                    MeterRegistry registry = context.getBean(MeterRegistry.class);
                    assertThat(registry.get("cosched.jdbc.interrupts.deferred")
                                    .tag("pool", "orders")
                                    .functionCounter()
                                    .count())
                            .isEqualTo(bound.interruptsDeferred());
                    assertThat(registry.get("cosched.jdbc.statements.cancelled")
                                    .tag("pool", "orders")
                                    .functionCounter()
                                    .count())
                            .isEqualTo(bound.statementsCancelled());
                });
        // another database: Spring Boot's own metadata, and no cosched meters
        runner.withBean(SimpleMeterRegistry.class, SimpleMeterRegistry::new)
                .withConfiguration(AutoConfigurations.of(MetricsAutoConfiguration.class))
                .run(context -> {
                    DataSourcePoolMetadataProvider provider = context.getBean(
                            "coschedLoopBoundPoolMetadataProvider", DataSourcePoolMetadataProvider.class);
                    assertThat(provider.getDataSourcePoolMetadata(context.getBean(DataSource.class)))
                            .isNull();
                    assertThat(context.getBean(MeterRegistry.class)
                                    .find("cosched.jdbc.interrupts.deferred")
                                    .meters())
                            .isEmpty();
                });
    }

    @Test
    void aNegativeCancelStatementsAfterStopsTheStartNamingTheProperty() {
        postgres.withPropertyValues("cosched.jdbc.cancel-statements-after=-1s")
                .run(context -> assertThat(context)
                        .hasFailed()
                        .getFailure()
                        .rootCause()
                        .hasMessage("cancel-statements-after: PT-1S (expected: >= 0)"));
    }

    @Test
    void isOffWithCoschedJdbcEnabledFalse() {
        postgres.withPropertyValues("cosched.jdbc.enabled=false").run(CoschedJdbcAutoConfigurationTest::isLeftAlone);
    }

    /** {@code cosched.enabled=false} turns all of cosched off, also beside an application's own IOManager. */
    @Test
    void isOffWhenCoschedIsDisabledEvenBesideTheApplicationsOwnIOManager() {
        postgres.withPropertyValues("cosched.enabled=false")
                .withBean(
                        IOManager.class,
                        () -> IOManager.builder().name("own").threads(1).build())
                .run(CoschedJdbcAutoConfigurationTest::isLeftAlone);
    }

    @Test
    void isOffWithoutAnIOManager() {
        withoutIOManager
                .withPropertyValues("spring.datasource.url=" + POSTGRES)
                .run(CoschedJdbcAutoConfigurationTest::isLeftAlone);
    }

    @Test
    void appliesNothingWithoutHikari() {
        // the application's own Hikari pool: Spring Boot's would back off without Hikari, cosched's must too
        runner.withUserConfiguration(OwnHikari.class)
                .withClassLoader(new FilteredClassLoader(HikariDataSource.class))
                .run(context -> {
                    assertThat(context.getBean(DataSource.class)).isExactlyInstanceOf(HikariDataSource.class);
                    assertThat(context)
                            .doesNotHaveBean(LoopBoundDataSourcePostProcessor.class)
                            .doesNotHaveBean("coschedJdbcMeters")
                            .doesNotHaveBean("coschedLoopBoundPoolMetadataProvider");
                });
    }

    @Test
    void appliesNothingWithoutCoschedJdbc() {
        postgres.withClassLoader(new FilteredClassLoader(LoopBoundDataSource.class))
                .run(context -> {
                    assertThat(context.getBean(DataSource.class)).isExactlyInstanceOf(HikariDataSource.class);
                    assertThat(context)
                            .doesNotHaveBean(LoopBoundDataSourcePostProcessor.class)
                            .doesNotHaveBean("coschedJdbcMeters")
                            .doesNotHaveBean("coschedLoopBoundPoolMetadataProvider");
                });
    }

    @Test
    void withoutMicrometerOnlyTheMetersAreLeftOut() {
        postgres.withClassLoader(new FilteredClassLoader(MeterBinder.class)).run(context -> {
            assertThat(context.getBean(DataSource.class)).isInstanceOf(LoopBoundDataSource.class);
            assertThat(context).doesNotHaveBean("coschedJdbcMeters").hasBean("coschedLoopBoundPoolMetadataProvider");
        });
    }

    @Test
    void withoutSpringBootsPoolMetadataOnlyItsProviderIsLeftOut() {
        postgres.withClassLoader(new FilteredClassLoader(DataSourcePoolMetadataProvider.class))
                .run(context -> {
                    assertThat(context.getBean(DataSource.class)).isInstanceOf(LoopBoundDataSource.class);
                    assertThat(context)
                            .hasBean("coschedJdbcMeters")
                            .doesNotHaveBean("coschedLoopBoundPoolMetadataProvider");
                });
    }

    @Configuration(proxyBeanMethods = false)
    static class OwnHikari {
        @Bean
        HikariDataSource myDataSource() {
            HikariDataSource hikari = new HikariDataSource();
            hikari.setJdbcUrl(POSTGRES);
            hikari.setPoolName("mine");
            return hikari;
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class OwnLoopBound {

        LoopBoundDataSource made;

        @Bean
        LoopBoundDataSource myDataSource(IOManager io) {
            HikariDataSource template = new HikariDataSource();
            template.setJdbcUrl(POSTGRES);
            made = new LoopBoundDataSource(template, io, Duration.ofSeconds(3));
            return made;
        }
    }

    /** Spring Boot's own Hikari pool, untouched, and no post-processor to change it. */
    private static void isLeftAlone(AssertableApplicationContext context) {
        assertThat(context.getBean(DataSource.class)).isExactlyInstanceOf(HikariDataSource.class);
        assertThat(context).doesNotHaveBean(LoopBoundDataSourcePostProcessor.class);
    }
}
