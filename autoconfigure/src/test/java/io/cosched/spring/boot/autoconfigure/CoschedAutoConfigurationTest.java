package io.cosched.spring.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cosched.IOManager;
import io.cosched.PoolScheduler;
import io.cosched.Scheduler;
import io.cosched.Transport;
import io.cosched.http.client.LoopHttpClient;
import io.cosched.jdbc.LoopBoundDataSource;
import io.cosched.spring.boot.autoconfigure.http.CoschedHttpClientProperties;
import io.cosched.spring.boot.autoconfigure.jdbc.CoschedJdbcProperties;
import io.cosched.spring.boot.autoconfigure.security.CoschedSecurityProperties;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

@Timeout(120)
@ExtendWith(OutputCaptureExtension.class)
class CoschedAutoConfigurationTest {

    private final ApplicationContextRunner runner =
            new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(CoschedAutoConfiguration.class));

    private static final int CORES = Runtime.getRuntime().availableProcessors();

    @Test
    void providesRunningSchedulersBuiltFromTheDefaults() {
        runner.run(context -> {
            IOManager io = context.getBean(IOManager.class);
            PoolScheduler pool = context.getBean(PoolScheduler.class);
            assertThat(io.name()).isEqualTo("cosched-io");
            assertThat(io.transport()).isEqualTo(Transport.EPOLL);
            assertThat(io.stats().threads()).isEqualTo(CORES);
            assertThat(pool.name()).isEqualTo("cosched");
            assertThat(pool.stats().threads()).isEqualTo(CORES);
            // started by the lifecycle bean: they take coroutines
            assertThat(io.spawn(() -> "io").join()).isEqualTo("io");
            assertThat(pool.spawn(() -> "pool").join()).isEqualTo("pool");
        });
    }

    @Test
    void propertyDefaultsEqualTheRuntimesDefaults() {
        CoschedProperties p = new CoschedProperties();
        assertThat(p.getShutdown().getTimeout()).isEqualTo(Scheduler.DEFAULT_STOP_TIMEOUT);
        try (IOManager io = IOManager.builder().build();
                PoolScheduler pool = PoolScheduler.builder().build()) {
            assertThat(p.getIo().getName()).isEqualTo(io.name());
            assertThat(p.getIo().getThreads()).isEqualTo(io.stats().threads());
            assertThat(p.getIo().getTransport()).isEqualTo(Transport.AUTO);
            assertThat(p.getScheduler().getName()).isEqualTo(pool.name());
            assertThat(p.getScheduler().getThreads()).isEqualTo(pool.stats().threads());
        }
        assertThat(p.getStall().getThreshold()).isEqualTo(IOManager.DEFAULT_STALL_THRESHOLD);
        assertThat(p.getStall().getWarmUpLimit()).isEqualTo(IOManager.DEFAULT_STALL_WARM_UP_LIMIT);
        assertThat(p.getScheduler().isUseCaller()).isFalse();
        assertThat(p.getCarrier().isRequire()).isFalse();
        // each technology's own properties, beside its auto-configuration (the web's: CoschedWebPropertiesTest)
        assertThat(new CoschedHttpClientProperties().isEnabled()).isTrue();
        assertThat(new CoschedHttpClientProperties().getIdleTimeout()).isEqualTo(LoopHttpClient.DEFAULT_IDLE_TIMEOUT);
        assertThat(new CoschedJdbcProperties().isEnabled()).isTrue();
        assertThat(new CoschedJdbcProperties().getCancelStatementsAfter())
                .isEqualTo(LoopBoundDataSource.DEFAULT_CANCEL_STATEMENTS_AFTER);
        assertThat(new CoschedSecurityProperties().getPasswordCheck())
                .isEqualTo(CoschedSecurityProperties.PasswordCheck.COMPUTE);
    }

    @Test
    void everySchedulerPropertyTakesEffect() {
        runner.withPropertyValues(
                        "cosched.io.name=edge",
                        "cosched.io.threads=1",
                        "cosched.io.transport=nio",
                        "cosched.scheduler.name=work",
                        "cosched.scheduler.threads=3",
                        "cosched.scheduler.use-caller=true")
                .run(context -> {
                    IOManager io = context.getBean(IOManager.class);
                    PoolScheduler pool = context.getBean(PoolScheduler.class);
                    assertThat(io.name()).isEqualTo("edge");
                    assertThat(io.stats().threads()).isEqualTo(1);
                    assertThat(io.transport()).isEqualTo(Transport.NIO);
                    assertThat(io.spawn(() -> Thread.currentThread().toString()).join())
                            .endsWith("@edge-0");
                    assertThat(pool.name()).isEqualTo("work");
                    assertThat(pool.stats().threads()).isEqualTo(3);
                    // use-caller: only threads - 1 carrier threads of its own
                    assertThat(threadNames()).contains("work-0", "work-1").doesNotContain("work-2");
                });
    }

    @Test
    void backsOffWhenTheApplicationDefinesItsOwnSchedulersAndStillStartsThem() {
        runner.withUserConfiguration(OwnSchedulers.class).run(context -> {
            assertThat(context).getBeans(IOManager.class).hasSize(1);
            assertThat(context.getBean(IOManager.class).name()).isEqualTo("mine-io");
            assertThat(context.getBean(PoolScheduler.class).name()).isEqualTo("mine");
            assertThat(context.getBean(IOManager.class).spawn(() -> 1).join()).isEqualTo(1);
        });
    }

    @Configuration(proxyBeanMethods = false)
    static class OwnSchedulers {
        @Bean
        IOManager myIo() {
            return IOManager.builder().name("mine-io").threads(1).build();
        }

        @Bean
        PoolScheduler myPool() {
            return PoolScheduler.builder().name("mine").threads(1).build();
        }
    }

    @Test
    void customizersAdjustTheBuildersAfterTheProperties() {
        runner.withPropertyValues("cosched.io.threads=1")
                .withBean(CoschedCustomizer.class, () -> new CoschedCustomizer() {
                    @Override
                    public void customize(IOManager.Builder builder) {
                        builder.name("customized-io");
                    }

                    @Override
                    public void customize(PoolScheduler.Builder builder) {
                        builder.threads(1);
                    }
                })
                .run(context -> {
                    assertThat(context.getBean(IOManager.class).name()).isEqualTo("customized-io");
                    assertThat(context.getBean(IOManager.class).stats().threads())
                            .isEqualTo(1);
                    assertThat(context.getBean(PoolScheduler.class).stats().threads())
                            .isEqualTo(1);
                });
    }

    @Test
    void springBootsApplicationTaskExecutorStaysAlongsideTheSchedulers() {
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(
                        CoschedAutoConfiguration.class,
                        org.springframework.boot.autoconfigure.task.TaskExecutionAutoConfiguration.class))
                .run(context -> {
                    assertThat(context).hasSingleBean(IOManager.class).hasSingleBean(PoolScheduler.class);
                    assertThat(context).hasBean("applicationTaskExecutor");
                });
    }

    @Test
    void coschedEnabledFalseSwitchesEverythingOff() {
        runner.withPropertyValues("cosched.enabled=false").run(context -> {
            assertThat(context).doesNotHaveBean(IOManager.class);
            assertThat(context).doesNotHaveBean(PoolScheduler.class);
            assertThat(context).doesNotHaveBean(SchedulerLifecycle.class);
        });
    }

    @Test
    void closingTheContextStopsTheSchedulers() {
        IOManager[] io = new IOManager[1];
        runner.withPropertyValues("cosched.io.threads=1").run(context -> io[0] = context.getBean(IOManager.class));
        assertThatThrownBy(() -> io[0].spawn(() -> 1)).hasMessageContaining("is STOPPED");
    }

    /**
     * Spring's test framework pauses a cached context between the test classes that share it and
     * restarts it for the next; a stopped IOManager cannot start again, so the schedulers sit a pause
     * out and stop only when the context closes.
     */
    @Test
    void theSchedulersRunThroughAContextPauseAndRestart() {
        runner.withPropertyValues("cosched.io.threads=1").run(context -> {
            context.pause();
            context.restart();
            assertThat(context.getBean(IOManager.class)
                            .spawn(() -> 1)
                            .toFuture()
                            .get(10, TimeUnit.SECONDS))
                    .isEqualTo(1);
            assertThat(context.getBean(PoolScheduler.class)
                            .spawn(() -> 2)
                            .toFuture()
                            .get(10, TimeUnit.SECONDS))
                    .isEqualTo(2);
        });
    }

    @Test
    void theLifecycleRunsBelowTheWebServersPhases() {
        // lower phases start earlier and stop later: the loops outlive the server's graceful drain
        assertThat(SchedulerLifecycle.PHASE)
                .isLessThan(
                        org.springframework.boot.web.server.context.WebServerApplicationContext
                                .START_STOP_LIFECYCLE_PHASE)
                .isLessThan(
                        org.springframework.boot.web.server.context.WebServerApplicationContext
                                .GRACEFUL_SHUTDOWN_PHASE);
    }

    // ---- bad values: the failure analysis Spring Boot prints names property, value and rule ----

    @Test
    void failsToStartWhenThreadsIsZero(CapturedOutput output) {
        assertStartupFails(
                output,
                "cosched.io.threads=0",
                "Property: cosched.io.threads",
                "Value: \"0\"",
                "threads: 0 (expected: > 0)");
    }

    @Test
    void failsToStartWhenSchedulerThreadsIsNegative(CapturedOutput output) {
        assertStartupFails(
                output,
                "cosched.scheduler.threads=-4",
                "Property: cosched.scheduler.threads",
                "threads: -4 (expected: > 0)");
    }

    @Test
    void failsToStartOnAnUnknownTransportListingTheValidOnes(CapturedOutput output) {
        assertStartupFails(
                output,
                "cosched.io.transport=kqueue",
                "Property: cosched.io.transport",
                "Value: \"kqueue\"",
                "AUTO",
                "EPOLL",
                "NIO");
    }

    @Test
    void failsToStartOnANegativeShutdownTimeout(CapturedOutput output) {
        assertStartupFails(
                output,
                "cosched.shutdown.timeout=-5s",
                "Property: cosched.shutdown.timeout",
                "timeout: PT-5S (expected: >= 0)");
    }

    @Test
    void failsToStartOnANegativeStallThreshold(CapturedOutput output) {
        assertStartupFails(
                output,
                "cosched.stall.threshold=-1ms",
                "Property: cosched.stall.threshold",
                "threshold: PT-0.001S (expected: >= 0)");
    }

    @Test
    void failsToStartOnANegativeStallWarmUpLimit(CapturedOutput output) {
        assertStartupFails(
                output,
                "cosched.stall.warm-up-limit=-1s",
                "Property: cosched.stall.warm-up-limit",
                "warmUpLimit: PT-1S (expected: >= 0)");
    }

    @Test
    void failsToStartOnTheRemovedStallWarmUpNamingWhatReplacedIt(CapturedOutput output) {
        assertStartupFails(
                output,
                "cosched.stall.warm-up=60s",
                "Property: cosched.stall.warm-up",
                "cosched.stall.warm-up=PT1M is no longer read",
                "cosched.stall.warm-up-limit");
    }

    @Test
    void theStallThresholdReachesBothSchedulers() {
        runner.withPropertyValues("cosched.io.name=wd-io", "cosched.scheduler.name=wd-pool")
                .run(context ->
                        assertThat(threadNames()).contains("cosched-watchdog-wd-io", "cosched-watchdog-wd-pool"));
        runner.withPropertyValues(
                        "cosched.io.name=nowd-io", "cosched.scheduler.name=nowd-pool", "cosched.stall.threshold=0")
                .run(context -> assertThat(threadNames())
                        .doesNotContain("cosched-watchdog-nowd-io", "cosched-watchdog-nowd-pool"));
    }

    private static void assertStartupFails(CapturedOutput output, String property, String... expected) {
        StartupFailures.assertStartupFails(Minimal.class, output, property, expected);
    }

    @Configuration(proxyBeanMethods = false)
    @ImportAutoConfiguration(CoschedAutoConfiguration.class)
    static class Minimal {}

    @Test
    void aContextThatFailsAfterTheSchedulersStartedLeavesNoLoopThreadBehind() {
        runner.withPropertyValues("cosched.io.name=doomed-io", "cosched.io.threads=2")
                .withUserConfiguration(FailsAfterTheSchedulers.class)
                .run(context -> {
                    assertThat(context).hasFailed();
                    assertThat(context.getStartupFailure())
                            .hasStackTraceContaining("doomed-io is RUNNING, then this bean fails");
                });
        // the threads end as their loops terminate, just after the stop returned
        io.cosched.TestSupport.eventually(
                Duration.ofSeconds(10),
                () -> threadNames().stream().noneMatch(n -> n.startsWith("doomed-io")),
                () -> threadNames().toString());
    }

    @Configuration(proxyBeanMethods = false)
    static class FailsAfterTheSchedulers {
        @Bean
        Object failing(IOManager io) {
            throw new IllegalStateException(io.name() + " is " + io.state() + ", then this bean fails");
        }
    }

    private static List<String> threadNames() {
        return Thread.getAllStackTraces().keySet().stream().map(Thread::getName).toList();
    }

    @Test
    void theShutdownTimeoutBindsAsADuration() {
        runner.withPropertyValues("cosched.shutdown.timeout=2s")
                .run(context -> assertThat(context.getBean(CoschedProperties.class)
                                .getShutdown()
                                .getTimeout())
                        .isEqualTo(Duration.ofSeconds(2)));
    }
}
