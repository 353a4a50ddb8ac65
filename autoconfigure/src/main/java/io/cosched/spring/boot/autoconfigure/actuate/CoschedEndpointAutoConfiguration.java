package io.cosched.spring.boot.autoconfigure.actuate;

import io.cosched.Scheduler;
import io.cosched.spring.boot.actuate.CoschedEndpoint;
import io.cosched.spring.boot.autoconfigure.CoschedAutoConfiguration;
import io.cosched.spring.boot.autoconfigure.CoschedEndpointProperties;
import io.cosched.spring.web.CoschedWebStats;
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
@AutoConfiguration(after = CoschedAutoConfiguration.class,
        afterName = "io.cosched.spring.boot.autoconfigure.web.CoschedWebFluxAutoConfiguration")
@ConditionalOnClass(Endpoint.class)
@ConditionalOnBean(Scheduler.class)
@ConditionalOnAvailableEndpoint(CoschedEndpoint.class)
@EnableConfigurationProperties(CoschedEndpointProperties.class)
public final class CoschedEndpointAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean
    CoschedEndpoint coschedEndpoint(ObjectProvider<Scheduler> schedulers, ObjectProvider<CoschedWebStats> web,
            CoschedEndpointProperties properties) {
        return new CoschedEndpoint(new SchedulerBeans(schedulers), web::getIfAvailable, properties.getDump().isEnabled());
    }
}
