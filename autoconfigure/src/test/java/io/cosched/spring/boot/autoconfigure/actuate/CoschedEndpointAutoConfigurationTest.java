package io.cosched.spring.boot.autoconfigure.actuate;

import static io.cosched.TestSupport.eventually;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cosched.CoroutineState;
import io.cosched.IOManager;
import io.cosched.PoolScheduler;
import io.cosched.SchedulerStats;
import io.cosched.spring.boot.actuate.CoschedEndpoint;
import io.cosched.spring.boot.actuate.CoschedEndpoint.CoroutineDump;
import io.cosched.spring.boot.actuate.CoschedEndpoint.CoschedReport;
import io.cosched.spring.boot.autoconfigure.CoschedAutoConfiguration;
import io.cosched.spring.boot.autoconfigure.CoschedCustomizer;
import io.cosched.spring.boot.autoconfigure.web.CoschedReactorNettyAutoConfiguration;
import io.cosched.spring.boot.autoconfigure.web.CoschedWebFluxAutoConfiguration;
import io.cosched.spring.boot.autoconfigure.web.CoschedWebStreamingAutoConfiguration;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.context.runner.ReactiveWebApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** The {@code cosched} actuator endpoint: what it reports once exposed, and when it is not there. */
@Timeout(60)
class CoschedEndpointAutoConfigurationTest {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withPropertyValues("cosched.io.threads=1", "cosched.scheduler.threads=1")
            .withConfiguration(
                    AutoConfigurations.of(CoschedAutoConfiguration.class, CoschedEndpointAutoConfiguration.class));

    // like Spring Boot's own endpoints, it exists only once exposed
    private final ApplicationContextRunner exposed =
            runner.withPropertyValues("management.endpoints.web.exposure.include=cosched");

    @Test
    void reportsEveryRunningScheduler() {
        exposed.run(context -> {
            CoschedReport report = context.getBean(CoschedEndpoint.class).report();
            assertThat(report.schedulers()).containsOnlyKeys("cosched-io", "cosched");
            assertThat(report.schedulers().get("cosched-io").type()).isEqualTo("io");
            assertThat(report.schedulers().get("cosched-io").transport())
                    .isEqualTo(
                            context.getBean(IOManager.class).transport().name().toLowerCase(Locale.ROOT));
            assertThat(report.schedulers().get("cosched").type()).isEqualTo("pool");
            assertThat(report.schedulers().values())
                    .allSatisfy(s -> assertThat(s.stats().state()).isEqualTo(SchedulerStats.State.RUNNING));
            // no WebFlux here: nothing serves requests, so there is nothing to count
            assertThat(report.web()).isNull();
            assertThat(report.server()).isNull();
        });
    }

    @Test
    void reportsTheApplicationsOwnSchedulerToo() {
        // the application's PoolScheduler takes the place of cosched's; the endpoint looks up whichever there are
        exposed.withUserConfiguration(OwnScheduler.class).run(context -> {
            CoschedEndpoint endpoint = context.getBean(CoschedEndpoint.class);
            assertThat(endpoint.report().schedulers()).containsOnlyKeys("cosched-io", "mine");
            assertThat(endpoint.scheduler("mine").stats().threads()).isEqualTo(2);
            assertThat(endpoint.scheduler("no-such-scheduler")).isNull();
        });
    }

    @Test
    void readsTheSchedulersNumbersWhenAskedNotWhenItWasMade() {
        exposed.run(context -> {
            CoschedEndpoint endpoint = context.getBean(CoschedEndpoint.class);
            CountDownLatch release = new CountDownLatch(1);
            var parked = context.getBean(PoolScheduler.class).spawn(() -> {
                release.await();
                return null;
            });
            try {
                eventually(
                        Duration.ofSeconds(10),
                        () -> endpoint.scheduler("cosched").stats().waiting() == 1,
                        () -> endpoint.scheduler("cosched").toString());
                assertThat(endpoint.report().schedulers().get("cosched").stats().coroutines())
                        .isEqualTo(1);
            } finally {
                release.countDown();
            }
            parked.join();
        });
    }

    @Test
    void inAWebFluxApplicationItAlsoReportsTheRequestsAndTheServersConnections() {
        new ReactiveWebApplicationContextRunner()
                .withPropertyValues(
                        "cosched.io.threads=1",
                        "cosched.scheduler.threads=1",
                        "management.endpoints.web.exposure.include=cosched")
                .withConfiguration(AutoConfigurations.of(
                        CoschedAutoConfiguration.class,
                        CoschedReactorNettyAutoConfiguration.class,
                        CoschedWebStreamingAutoConfiguration.class,
                        CoschedWebFluxAutoConfiguration.class,
                        CoschedEndpointAutoConfiguration.class))
                .run(context -> {
                    CoschedReport report =
                            context.getBean(CoschedEndpoint.class).report();
                    assertThat(report.web()).isNotNull();
                    assertThat(report.web()).containsEntry("inFlight", 0);
                    assertThat(report.server()).isNotNull();
                    assertThat(report.server()).containsEntry("accepted", 0L);
                });
    }

    @Test
    void theDumpPropertyMakesTheSchedulersTrackTheirCoroutinesWhenTheEndpointIsExposed() {
        exposed.run(context -> assertThatThrownBy(
                        () -> context.getBean(IOManager.class).coroutines())
                .isInstanceOf(IllegalStateException.class));
        exposed.withPropertyValues("management.endpoint.cosched.dump.enabled=true")
                .run(context -> {
                    assertThat(context.getBean(IOManager.class).coroutines()).isEmpty();
                    assertThat(context.getBean(PoolScheduler.class).coroutines())
                            .isEmpty();
                });
        // the setting belongs to the endpoint: without it, nobody reads a dump and nothing is tracked
        runner.withPropertyValues("management.endpoint.cosched.dump.enabled=true")
                .run(context -> assertThatThrownBy(
                                () -> context.getBean(IOManager.class).coroutines())
                        .isInstanceOf(IllegalStateException.class));
    }

    @Test
    void theDumpListsALiveCoroutineWithItsStackOnlyWhenSwitchedOn() {
        exposed.withPropertyValues("management.endpoint.cosched.dump.enabled=true")
                .run(context -> {
                    PoolScheduler pool = context.getBean(PoolScheduler.class);
                    CountDownLatch release = new CountDownLatch(1);
                    var parked = pool.spawn(() -> {
                        release.await();
                        return null;
                    });
                    try {
                        // in the latch's wait, so that its stack shows where it is
                        eventually(
                                Duration.ofSeconds(10),
                                () -> parked.state() == CoroutineState.WAITING,
                                () -> parked.state().toString());
                        CoroutineDump dump =
                                context.getBean(CoschedEndpoint.class).dump("cosched", "dump");
                        assertThat(dump.total()).isEqualTo(1);
                        assertThat(dump.coroutines().getFirst().id()).isEqualTo(parked.id());
                        assertThat(dump.coroutines().getFirst().stack())
                                .anyMatch(frame -> frame.contains("CountDownLatch.await"));
                    } finally {
                        release.countDown();
                    }
                    parked.join();
                });
        // the stacks may show data: switched off, the dump is not there at all (404)
        exposed.run(context -> assertThat(context.getBean(CoschedEndpoint.class).dump("cosched", "dump"))
                .isNull());
    }

    @Test
    void backsOffWhenTheApplicationDefinesItsOwnEndpoint() {
        CoschedEndpoint own = new CoschedEndpoint(List::of, () -> null, false);
        exposed.withBean(CoschedEndpoint.class, () -> own).run(context -> {
            assertThat(context).getBean(CoschedEndpoint.class).isSameAs(own);
            assertThat(context.getBean(CoschedEndpoint.class).report().schedulers())
                    .isEmpty();
        });
    }

    @Test
    void isNotThereUnlessExposed() {
        runner.run(context ->
                assertThat(context).doesNotHaveBean(CoschedEndpoint.class).doesNotHaveBean("coschedDumpTracking"));
    }

    @Test
    void isNotThereWhenItsAccessIsNone() {
        // NONE: the context runner's environment has no relaxed enum conversion (an application's has)
        exposed.withPropertyValues("management.endpoint.cosched.access=NONE")
                .run(context -> assertThat(context)
                        .doesNotHaveBean(CoschedEndpoint.class)
                        .doesNotHaveBean("coschedDumpTracking"));
    }

    @Test
    void isNotThereWithoutAScheduler() {
        exposed.withPropertyValues("cosched.enabled=false")
                .run(context -> assertThat(context)
                        .doesNotHaveBean(CoschedEndpoint.class)
                        .doesNotHaveBean("coschedDumpTracking"));
    }

    @Test
    void appliesNothingWithoutSpringBootsActuator() {
        exposed.withClassLoader(new FilteredClassLoader(Endpoint.class)).run(context -> {
            assertThat(context).hasNotFailed().hasSingleBean(IOManager.class);
            assertThat(context).doesNotHaveBean(CoschedEndpoint.class).doesNotHaveBean(CoschedCustomizer.class);
        });
    }

    @Configuration(proxyBeanMethods = false)
    static class OwnScheduler {
        @Bean
        PoolScheduler myScheduler() {
            return PoolScheduler.builder().name("mine").threads(2).build();
        }
    }
}
