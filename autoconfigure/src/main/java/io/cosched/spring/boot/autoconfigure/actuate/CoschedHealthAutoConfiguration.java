package io.cosched.spring.boot.autoconfigure.actuate;

import io.cosched.Scheduler;
import io.cosched.spring.boot.actuate.CoschedHealthIndicator;
import io.cosched.spring.boot.actuate.CoschedSheddingHealthIndicator;
import io.cosched.spring.boot.autoconfigure.CoschedAutoConfiguration;
import io.cosched.spring.boot.autoconfigure.web.CoschedWebFluxAutoConfiguration;
import io.cosched.spring.boot.autoconfigure.web.CoschedWebProperties;
import io.cosched.spring.web.CoschedWebStats;
import io.cosched.spring.web.shedding.SheddingReadiness;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.autoconfigure.contributor.HealthContributorAutoConfiguration;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The {@code cosched} health contributor ({@code management.health.cosched.enabled=false} switches it
 * off), and the opt-in {@code coschedShedding} one for readiness probes.
 */
@AutoConfiguration(
        after = {CoschedAutoConfiguration.class, CoschedWebFluxAutoConfiguration.class},
        before = HealthContributorAutoConfiguration.class)
@ConditionalOnClass(HealthIndicator.class)
@ConditionalOnBean(Scheduler.class)
@ConditionalOnEnabledHealthIndicator("cosched")
public final class CoschedHealthAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean(name = "coschedHealthIndicator")
    CoschedHealthIndicator coschedHealthIndicator(ObjectProvider<Scheduler> schedulers) {
        return new CoschedHealthIndicator(new SchedulerBeans(schedulers));
    }

    /** {@code coschedShedding}, for the readiness group: {@code cosched.web.readiness.enabled=true}. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(CoschedWebStats.class)
    @ConditionalOnBean(CoschedWebStats.class)
    @ConditionalOnBooleanProperty("cosched.web.readiness.enabled")
    static final class SheddingReadinessConfiguration {

        @Bean
        @ConditionalOnMissingBean(name = "coschedSheddingHealthIndicator")
        CoschedSheddingHealthIndicator coschedSheddingHealthIndicator(CoschedWebStats stats, CoschedWebProperties web) {
            CoschedWebProperties.Readiness r = web.getReadiness();
            try {
                return new CoschedSheddingHealthIndicator(
                        new SheddingReadiness(stats, r.getRefuseAt(), r.getAcceptBelow(), r.getHold()));
            } catch (IllegalArgumentException e) { // "refuse-at: 0.0 (expected: ...)": the property's own name
                throw new IllegalArgumentException("cosched.web.readiness." + e.getMessage(), e);
            }
        }
    }
}
