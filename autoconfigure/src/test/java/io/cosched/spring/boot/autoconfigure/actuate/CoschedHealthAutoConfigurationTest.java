package io.cosched.spring.boot.autoconfigure.actuate;

import static org.assertj.core.api.Assertions.assertThat;

import io.cosched.PoolScheduler;
import io.cosched.spring.boot.actuate.CoschedHealthIndicator;
import io.cosched.spring.boot.actuate.CoschedSheddingHealthIndicator;
import io.cosched.spring.boot.autoconfigure.CoschedAutoConfiguration;
import io.cosched.spring.boot.autoconfigure.web.CoschedReactorNettyAutoConfiguration;
import io.cosched.spring.boot.autoconfigure.web.CoschedWebFluxAutoConfiguration;
import io.cosched.spring.boot.autoconfigure.web.CoschedWebStreamingAutoConfiguration;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.context.runner.ReactiveWebApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** The {@code cosched} health contributor, and the opt-in {@code coschedShedding} one for readiness probes. */
@Timeout(60)
class CoschedHealthAutoConfigurationTest {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withPropertyValues("cosched.io.threads=1", "cosched.scheduler.threads=1")
            .withConfiguration(
                    AutoConfigurations.of(CoschedAutoConfiguration.class, CoschedHealthAutoConfiguration.class));

    /** The web: the readiness contributor reads the coroutine requests' numbers, which only WebFlux has. */
    private final ReactiveWebApplicationContextRunner web = new ReactiveWebApplicationContextRunner()
            .withPropertyValues("cosched.io.threads=1", "cosched.scheduler.threads=1")
            .withConfiguration(AutoConfigurations.of(
                    CoschedAutoConfiguration.class,
                    CoschedReactorNettyAutoConfiguration.class,
                    CoschedWebStreamingAutoConfiguration.class,
                    CoschedWebFluxAutoConfiguration.class,
                    CoschedHealthAutoConfiguration.class));

    @Test
    void isUpWithEachRunningSchedulersNumbers() {
        runner.run(context -> {
            Health health = context.getBean("coschedHealthIndicator", HealthIndicator.class)
                    .health();
            assertThat(health.getStatus()).isEqualTo(Status.UP);
            assertThat(health.getDetails()).containsOnlyKeys("cosched-io", "cosched");
            @SuppressWarnings("unchecked")
            Map<String, Object> io = (Map<String, Object>) health.getDetails().get("cosched-io");
            assertThat(io)
                    .containsEntry("threads", 1)
                    .containsEntry("stalledThreads", 0)
                    .containsKeys("state", "mode", "queueDepth", "coroutines");
        });
    }

    @Test
    void isDownOnceTheApplicationsOwnSchedulerStops() {
        // it asks for the schedulers when it is read: the application's own is one of them, stopped or not
        runner.withUserConfiguration(OwnScheduler.class).run(context -> {
            HealthIndicator indicator = context.getBean("coschedHealthIndicator", HealthIndicator.class);
            assertThat(indicator.health().getStatus()).isEqualTo(Status.UP);
            assertThat(indicator.health().getDetails()).containsOnlyKeys("cosched-io", "mine");
            context.getBean(PoolScheduler.class).stop(Duration.ofSeconds(10));
            assertThat(indicator.health().getStatus()).isEqualTo(Status.DOWN);
        });
    }

    @Test
    void backsOffWhenTheApplicationDefinesItsOwnCoschedHealthIndicator() {
        HealthIndicator own = () -> Health.outOfService().build();
        runner.withBean("coschedHealthIndicator", HealthIndicator.class, () -> own)
                .run(context -> {
                    assertThat(context).doesNotHaveBean(CoschedHealthIndicator.class);
                    assertThat(context.getBean("coschedHealthIndicator")).isSameAs(own);
                });
    }

    @Test
    void isOffWithManagementHealthCoschedEnabledFalse() {
        runner.withPropertyValues("management.health.cosched.enabled=false")
                .run(context -> assertThat(context).doesNotHaveBean(CoschedHealthIndicator.class));
    }

    @Test
    void isOffWhenHealthIndicatorsAreOffByDefault() {
        runner.withPropertyValues("management.health.defaults.enabled=false")
                .run(context -> assertThat(context).doesNotHaveBean(CoschedHealthIndicator.class));
        // its own switch wins over the default, as with Spring Boot's contributors
        runner.withPropertyValues("management.health.defaults.enabled=false", "management.health.cosched.enabled=true")
                .run(context -> assertThat(context).hasSingleBean(CoschedHealthIndicator.class));
    }

    @Test
    void isNotThereWithoutAScheduler() {
        runner.withPropertyValues("cosched.enabled=false")
                .run(context -> assertThat(context).doesNotHaveBean(CoschedHealthIndicator.class));
    }

    @Test
    void appliesNothingWithoutSpringBootsHealth() {
        runner.withClassLoader(new FilteredClassLoader(HealthIndicator.class)).run(context -> {
            assertThat(context).hasNotFailed().hasSingleBean(PoolScheduler.class);
            assertThat(context).doesNotHaveBean(CoschedHealthIndicator.class);
        });
    }

    // ---- coschedShedding, for the readiness group ----

    @Test
    void theSheddingContributorIsUpAndCountsNothingWhileNothingIsShed() {
        web.withPropertyValues("cosched.web.readiness.enabled=true").run(context -> {
            Health health =
                    context.getBean(CoschedSheddingHealthIndicator.class).health();
            assertThat(health.getStatus()).isEqualTo(Status.UP);
            assertThat(health.getDetails())
                    .containsEntry("shedShare", 0.0)
                    .containsEntry("shed", 0L)
                    .containsEntry("started", 0L)
                    .containsEntry("inFlight", 0)
                    .containsEntry("limit", Integer.MAX_VALUE); // no max-in-flight
        });
    }

    @Test
    void theSheddingContributorIsNotThereUnlessAskedFor() {
        web.run(context -> assertThat(context)
                .hasSingleBean(CoschedHealthIndicator.class)
                .doesNotHaveBean(CoschedSheddingHealthIndicator.class));
    }

    @Test
    void theSheddingContributorNeedsTheCoroutineRequestsNumbers() {
        // no WebFlux, or WebFlux without coroutine handlers: nothing is shed, so there is nothing to be ready by
        runner.withPropertyValues("cosched.web.readiness.enabled=true")
                .run(context -> assertThat(context)
                        .hasSingleBean(CoschedHealthIndicator.class)
                        .doesNotHaveBean(CoschedSheddingHealthIndicator.class));
        web.withPropertyValues("cosched.web.readiness.enabled=true", "cosched.web.mode=off")
                .run(context -> assertThat(context).doesNotHaveBean(CoschedSheddingHealthIndicator.class));
    }

    @Test
    void theSheddingReadinessContributorIsOptInAndABadSettingNamesItsProperty() {
        web.run(context -> assertThat(context).doesNotHaveBean("coschedSheddingHealthIndicator"));
        web.withPropertyValues("cosched.web.readiness.enabled=true")
                .run(context -> assertThat(context).hasBean("coschedSheddingHealthIndicator"));
        web.withPropertyValues("cosched.web.readiness.enabled=true", "cosched.web.readiness.accept-below=0.5")
                .run(context -> assertThat(context)
                        .getFailure()
                        .hasStackTraceContaining(
                                "cosched.web.readiness.accept-below: 0.5 (expected: > 0 and <= its refuse-at, 0.1)"));
    }

    @Test
    void theSheddingContributorBacksOffWhenTheApplicationDefinesItsOwn() {
        HealthIndicator own = () -> Health.up().build();
        web.withPropertyValues("cosched.web.readiness.enabled=true")
                .withBean("coschedSheddingHealthIndicator", HealthIndicator.class, () -> own)
                .run(context -> {
                    assertThat(context).doesNotHaveBean(CoschedSheddingHealthIndicator.class);
                    assertThat(context.getBean("coschedSheddingHealthIndicator"))
                            .isSameAs(own);
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
