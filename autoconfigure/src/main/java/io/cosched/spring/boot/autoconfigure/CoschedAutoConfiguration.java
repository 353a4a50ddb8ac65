package io.cosched.spring.boot.autoconfigure;

import io.cosched.IOManager;
import io.cosched.PoolScheduler;
import io.cosched.Scheduler;
import java.util.ArrayList;
import java.util.List;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.context.LifecycleProperties;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;

/**
 * cosched's schedulers: an {@link IOManager} (the event loops that also serve HTTP) and a
 * {@link PoolScheduler}, built from {@code cosched.*}, adjusted by {@link CoschedCustomizer}s, and
 * started when made and stopped after the web server. Each backs off when the application defines its own.
 *
 * <p>After Spring Boot's task execution: the schedulers are {@code Executor}s, and Boot registers
 * its {@code applicationTaskExecutor} (used by {@code @Async}) only while no {@code Executor} bean
 * exists. Seen first, they would make it disappear.
 */
@AutoConfiguration(afterName = "org.springframework.boot.autoconfigure.task.TaskExecutionAutoConfiguration")
@ConditionalOnClass(IOManager.class)
@ConditionalOnBooleanProperty(name = "cosched.enabled", matchIfMissing = true)
@EnableConfigurationProperties(CoschedProperties.class)
public final class CoschedAutoConfiguration {

    // destroyMethod = "": the lifecycle bean stops the schedulers, in the right phase
    @Bean(destroyMethod = "")
    @ConditionalOnMissingBean
    IOManager coschedIOManager(CoschedProperties properties, ObjectProvider<CoschedCustomizer> customizers) {
        CoschedProperties.Io io = properties.getIo();
        IOManager.Builder builder = IOManager.builder()
                .name(io.getName())
                .threads(io.getThreads())
                .transport(io.getTransport())
                .requireCarrierMode(properties.getCarrier().isRequire())
                .stallThreshold(properties.getStall().getThreshold())
                .stallWarmUpLimit(properties.getStall().getWarmUpLimit());
        customizers.orderedStream().forEach(c -> c.customize(builder));
        return builder.build();
    }

    @Bean(destroyMethod = "")
    @ConditionalOnMissingBean
    PoolScheduler coschedPoolScheduler(CoschedProperties properties, ObjectProvider<CoschedCustomizer> customizers) {
        CoschedProperties.Pool scheduler = properties.getScheduler();
        PoolScheduler.Builder builder = PoolScheduler.builder()
                .name(scheduler.getName())
                .threads(scheduler.getThreads())
                .useCaller(scheduler.isUseCaller())
                .requireCarrierMode(properties.getCarrier().isRequire())
                .stallThreshold(properties.getStall().getThreshold())
                .stallWarmUpLimit(properties.getStall().getWarmUpLimit());
        customizers.orderedStream().forEach(c -> c.customize(builder));
        return builder.build();
    }

    /** Starts every IOManager and PoolScheduler bean, the application's own included, when it is made. */
    @Bean
    static SchedulerLifecycle.Starter coschedSchedulerStarter() {
        return new SchedulerLifecycle.Starter();
    }

    /** Stops every IOManager and PoolScheduler bean, the application's own included, after the web server. */
    @Bean
    SchedulerLifecycle coschedSchedulerLifecycle(
            ObjectProvider<IOManager> ioManagers,
            ObjectProvider<PoolScheduler> poolSchedulers,
            CoschedProperties properties) {
        List<Scheduler> schedulers = new ArrayList<>();
        ioManagers.orderedStream().forEach(schedulers::add);
        poolSchedulers.orderedStream().forEach(schedulers::add);
        return new SchedulerLifecycle(schedulers, properties.getShutdown().getTimeout());
    }

    /** Holds the close for {@code cosched.shutdown.delay} with readiness refusing, before the web server stops accepting. */
    @Bean
    ShutdownDelayLifecycle coschedShutdownDelay(
            CoschedProperties properties, ObjectProvider<LifecycleProperties> lifecycle) {
        return new ShutdownDelayLifecycle(
                properties.getShutdown().getDelay(),
                lifecycle.getIfAvailable(LifecycleProperties::new).getTimeoutPerShutdownPhase());
    }
}
