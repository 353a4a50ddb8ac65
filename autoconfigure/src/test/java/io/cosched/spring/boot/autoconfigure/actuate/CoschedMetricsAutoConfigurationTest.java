package io.cosched.spring.boot.autoconfigure.actuate;

import static io.cosched.TestSupport.eventually;
import static org.assertj.core.api.Assertions.assertThat;

import io.cosched.IOManager;
import io.cosched.PoolScheduler;
import io.cosched.spring.boot.actuate.CoschedMeterBinder;
import io.cosched.spring.boot.autoconfigure.CoschedAutoConfiguration;
import io.cosched.spring.boot.autoconfigure.web.CoschedReactorNettyAutoConfiguration;
import io.cosched.spring.boot.autoconfigure.web.CoschedWebFluxAutoConfiguration;
import io.cosched.spring.boot.autoconfigure.web.CoschedWebStreamingAutoConfiguration;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.context.runner.ReactiveWebApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** The scheduler and web meters, bound to the registries Spring Boot configures. */
@Timeout(60)
class CoschedMetricsAutoConfigurationTest {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withPropertyValues("cosched.io.threads=1", "cosched.scheduler.threads=1")
            .withConfiguration(AutoConfigurations.of(
                    CoschedAutoConfiguration.class,
                    MetricsAutoConfiguration.class,
                    SimpleMetricsExportAutoConfiguration.class,
                    CompositeMeterRegistryAutoConfiguration.class,
                    CoschedMetricsAutoConfiguration.class));

    /** A registry of the application's own, bound to by Spring Boot's metrics auto-configuration. */
    private final ApplicationContextRunner withOwnRegistry = new ApplicationContextRunner()
            .withPropertyValues("cosched.io.threads=1", "cosched.scheduler.threads=1")
            .withBean(SimpleMeterRegistry.class, SimpleMeterRegistry::new)
            .withConfiguration(AutoConfigurations.of(
                    CoschedAutoConfiguration.class,
                    MetricsAutoConfiguration.class,
                    CoschedMetricsAutoConfiguration.class));

    @Test
    void theCountersReadTheSchedulersNumbers() {
        runner.run(context -> {
            MeterRegistry registry = context.getBean(MeterRegistry.class);
            IOManager io = context.getBean(IOManager.class);
            for (int i = 0; i < 5; i++) {
                io.spawn(() -> 1).join();
            }
            // a coroutine counts as completed just after its result is handed over: a state, not an outcome
            eventually(
                    Duration.ofSeconds(10),
                    () -> io.stats().completedTasks() >= 5,
                    () -> io.stats().toString());
            assertThat(registry.get("cosched.tasks.completed")
                            .tag("scheduler", "cosched-io")
                            .functionCounter()
                            .count())
                    .isEqualTo(io.stats().completedTasks());
            assertThat(registry.get("cosched.tasks.completed")
                            .tag("scheduler", "cosched")
                            .functionCounter()
                            .count())
                    .isEqualTo(context.getBean(PoolScheduler.class).stats().completedTasks());
        });
    }

    @Test
    void theGaugesFollowTheSchedulerAsItChanges() {
        runner.run(context -> {
            MeterRegistry registry = context.getBean(MeterRegistry.class);
            var waiting = registry.get("cosched.coroutines")
                    .tags("scheduler", "cosched", "state", "waiting")
                    .gauge();
            assertThat(waiting.value()).isZero();
            CountDownLatch release = new CountDownLatch(1);
            var parked = context.getBean(PoolScheduler.class).spawn(() -> {
                release.await();
                return null;
            });
            try {
                eventually(Duration.ofSeconds(10), () -> waiting.value() == 1, () -> "waiting: " + waiting.value());
            } finally {
                release.countDown();
            }
            parked.join();
            eventually(Duration.ofSeconds(10), () -> waiting.value() == 0, () -> "waiting: " + waiting.value());
            assertThat(registry.get("cosched.scheduler.threads.idle")
                                    .tag("scheduler", "cosched-io")
                                    .gauge()
                                    .value()
                            + registry.get("cosched.scheduler.threads.active")
                                    .tag("scheduler", "cosched-io")
                                    .gauge()
                                    .value())
                    .isEqualTo(1);
        });
    }

    @Test
    void theApplicationsOwnSchedulerHasMetersToo() {
        runner.withUserConfiguration(OwnScheduler.class).run(context -> {
            MeterRegistry registry = context.getBean(MeterRegistry.class);
            assertThat(registry.find("cosched.tasks.completed")
                            .tag("scheduler", "mine")
                            .functionCounter())
                    .isNotNull();
            assertThat(registry.find("cosched.tasks.completed")
                            .tag("scheduler", "cosched")
                            .functionCounter())
                    .isNull();
        });
    }

    @Test
    void onlyAWebFluxApplicationHasTheWebAndServerMeters() {
        runner.run(context -> {
            MeterRegistry registry = context.getBean(MeterRegistry.class);
            assertThat(registry.find("cosched.web.in.flight").gauge()).isNull();
            assertThat(registry.find("cosched.server.connections.accepted").functionCounter())
                    .isNull();
        });
        new ReactiveWebApplicationContextRunner()
                .withPropertyValues("cosched.io.threads=1", "cosched.scheduler.threads=1")
                .withConfiguration(AutoConfigurations.of(
                        CoschedAutoConfiguration.class,
                        MetricsAutoConfiguration.class,
                        SimpleMetricsExportAutoConfiguration.class,
                        CompositeMeterRegistryAutoConfiguration.class,
                        CoschedReactorNettyAutoConfiguration.class,
                        CoschedWebStreamingAutoConfiguration.class,
                        CoschedWebFluxAutoConfiguration.class,
                        CoschedMetricsAutoConfiguration.class))
                .run(context -> {
                    MeterRegistry registry = context.getBean(MeterRegistry.class);
                    assertThat(registry.get("cosched.web.in.flight").gauge().value())
                            .isZero();
                    assertThat(registry.get("cosched.web.shed")
                                    .functionCounter()
                                    .count())
                            .isZero();
                    assertThat(registry.get("cosched.server.connections.accepted")
                                    .functionCounter()
                                    .count())
                            .isZero();
                });
    }

    @Test
    void bindsToARegistryOfTheApplicationsOwn() {
        withOwnRegistry.run(context -> assertThat(context.getBean(SimpleMeterRegistry.class)
                        .find("cosched.tasks.completed")
                        .tag("scheduler", "cosched-io")
                        .functionCounter())
                .isNotNull());
    }

    @Test
    void backsOffWhenTheApplicationDefinesItsOwnMeterBinder() {
        CoschedMeterBinder own = new CoschedMeterBinder(List.of(), null);
        runner.withBean(CoschedMeterBinder.class, () -> own).run(context -> {
            assertThat(context).getBean(CoschedMeterBinder.class).isSameAs(own);
            // its binder, of no scheduler, is all there is
            assertThat(context.getBean(MeterRegistry.class)
                            .find("cosched.tasks.completed")
                            .meters())
                    .isEmpty();
        });
    }

    @Test
    void isNotThereWithoutAMeterRegistry() {
        new ApplicationContextRunner()
                .withPropertyValues("cosched.io.threads=1", "cosched.scheduler.threads=1")
                .withConfiguration(
                        AutoConfigurations.of(CoschedAutoConfiguration.class, CoschedMetricsAutoConfiguration.class))
                .run(context ->
                        assertThat(context).hasSingleBean(IOManager.class).doesNotHaveBean(CoschedMeterBinder.class));
    }

    @Test
    void isNotThereWithoutAScheduler() {
        runner.withPropertyValues("cosched.enabled=false")
                .run(context -> assertThat(context)
                        .hasSingleBean(MeterRegistry.class)
                        .doesNotHaveBean(CoschedMeterBinder.class));
    }

    @Test
    void appliesNothingWithoutMicrometer() {
        withOwnRegistry
                .withClassLoader(new FilteredClassLoader(MeterRegistry.class))
                .run(context -> {
                    assertThat(context).hasNotFailed().hasSingleBean(IOManager.class);
                    assertThat(context).doesNotHaveBean(CoschedMeterBinder.class);
                });
    }

    @Test
    void appliesNothingWithoutSpringBootsMetrics() {
        // Micrometer and a registry, but not Spring Boot's metrics module, which binds the meters to registries
        new ApplicationContextRunner()
                .withPropertyValues("cosched.io.threads=1", "cosched.scheduler.threads=1")
                .withBean(SimpleMeterRegistry.class, SimpleMeterRegistry::new)
                .withConfiguration(
                        AutoConfigurations.of(CoschedAutoConfiguration.class, CoschedMetricsAutoConfiguration.class))
                .withClassLoader(new FilteredClassLoader(MetricsAutoConfiguration.class))
                .run(context -> {
                    assertThat(context).hasNotFailed().hasSingleBean(SimpleMeterRegistry.class);
                    assertThat(context).doesNotHaveBean(CoschedMeterBinder.class);
                });
    }

    @Configuration(proxyBeanMethods = false)
    static class OwnScheduler {
        @Bean
        PoolScheduler myScheduler() {
            return PoolScheduler.builder().name("mine").threads(1).build();
        }
    }
}
