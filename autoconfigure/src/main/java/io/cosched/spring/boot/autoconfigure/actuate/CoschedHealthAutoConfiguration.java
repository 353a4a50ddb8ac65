package io.cosched.spring.boot.autoconfigure.actuate;

import io.cosched.Scheduler;
import io.cosched.spring.boot.actuate.CoschedHealthIndicator;
import io.cosched.spring.boot.autoconfigure.CoschedAutoConfiguration;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.autoconfigure.contributor.HealthContributorAutoConfiguration;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.annotation.Bean;

/** The {@code cosched} health contributor; {@code management.health.cosched.enabled=false} switches it off. */
@AutoConfiguration(after = CoschedAutoConfiguration.class, before = HealthContributorAutoConfiguration.class)
@ConditionalOnClass(HealthIndicator.class)
@ConditionalOnBean(Scheduler.class)
@ConditionalOnEnabledHealthIndicator("cosched")
public final class CoschedHealthAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean(name = "coschedHealthIndicator")
    CoschedHealthIndicator coschedHealthIndicator(ObjectProvider<Scheduler> schedulers) {
        return new CoschedHealthIndicator(new SchedulerBeans(schedulers));
    }
}
