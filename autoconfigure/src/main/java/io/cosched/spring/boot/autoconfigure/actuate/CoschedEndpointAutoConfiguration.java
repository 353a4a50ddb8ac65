package io.cosched.spring.boot.autoconfigure.actuate;

import io.cosched.IOManager;
import io.cosched.PoolScheduler;
import io.cosched.Scheduler;
import io.cosched.spring.boot.actuate.CoschedEndpoint;
import io.cosched.spring.boot.autoconfigure.CoschedAutoConfiguration;
import io.cosched.spring.boot.autoconfigure.CoschedCustomizer;
import io.cosched.spring.web.CoschedWebStats;
import io.cosched.spring.web.netty.ServerConnections;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;

/**
 * The {@code cosched} actuator endpoint. Available like Spring Boot's own endpoints: it is served
 * once {@code management.endpoints.web.exposure.include} lists {@code cosched}.
 */
@AutoConfiguration(
        after = CoschedAutoConfiguration.class,
        afterName = {
            "io.cosched.spring.boot.autoconfigure.web.CoschedWebFluxAutoConfiguration",
            "io.cosched.spring.boot.autoconfigure.web.CoschedReactorNettyAutoConfiguration"
        })
@ConditionalOnClass(Endpoint.class)
@ConditionalOnBean(Scheduler.class)
@ConditionalOnAvailableEndpoint(CoschedEndpoint.class)
@EnableConfigurationProperties(CoschedEndpointProperties.class)
public final class CoschedEndpointAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean
    CoschedEndpoint coschedEndpoint(
            ObjectProvider<Scheduler> schedulers,
            ObjectProvider<CoschedWebStats> web,
            ObjectProvider<ServerConnections> server,
            CoschedEndpointProperties properties) {
        return new CoschedEndpoint(
                new SchedulerBeans(schedulers),
                web::getIfAvailable,
                server::getIfAvailable,
                properties.getDump().isEnabled());
    }

    /**
     * With the coroutine dump on, the schedulers cosched builds track their coroutines (a set insert
     * and removal per coroutine); the application's own schedulers decide for themselves.
     */
    @Bean
    CoschedCustomizer coschedDumpTracking(CoschedEndpointProperties properties) {
        boolean track = properties.getDump().isEnabled();
        return new CoschedCustomizer() {
            @Override
            public void customize(PoolScheduler.Builder builder) {
                if (track) {
                    builder.trackCoroutines(true);
                }
            }

            @Override
            public void customize(IOManager.Builder builder) {
                if (track) {
                    builder.trackCoroutines(true);
                }
            }
        };
    }
}
