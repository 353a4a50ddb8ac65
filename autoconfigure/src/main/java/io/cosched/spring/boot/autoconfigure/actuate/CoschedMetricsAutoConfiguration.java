package io.cosched.spring.boot.autoconfigure.actuate;

import io.cosched.Scheduler;
import io.cosched.spring.boot.actuate.CoschedMeterBinder;
import io.cosched.spring.boot.autoconfigure.CoschedAutoConfiguration;
import io.cosched.spring.web.CoschedWebStats;
import io.cosched.spring.web.netty.ServerConnections;
import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration;
import org.springframework.context.annotation.Bean;

/** Micrometer meters for the schedulers and coroutine handlers, bound to every registry Spring Boot configures. */
@AutoConfiguration(
        after = {
            CoschedAutoConfiguration.class,
            MetricsAutoConfiguration.class,
            CompositeMeterRegistryAutoConfiguration.class
        },
        afterName = {
            "io.cosched.spring.boot.autoconfigure.web.CoschedWebFluxAutoConfiguration",
            "io.cosched.spring.boot.autoconfigure.web.CoschedReactorNettyAutoConfiguration"
        })
@ConditionalOnClass({MeterRegistry.class, MetricsAutoConfiguration.class})
@ConditionalOnBean({MeterRegistry.class, Scheduler.class})
public final class CoschedMetricsAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean
    CoschedMeterBinder coschedMeterBinder(
            ObjectProvider<Scheduler> schedulers,
            ObjectProvider<CoschedWebStats> web,
            ObjectProvider<ServerConnections> server) {
        return new CoschedMeterBinder(
                schedulers.orderedStream().toList(), web.getIfAvailable(), server.getIfAvailable());
    }
}
