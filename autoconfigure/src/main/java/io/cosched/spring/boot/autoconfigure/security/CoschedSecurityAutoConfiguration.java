package io.cosched.spring.boot.autoconfigure.security;

import io.cosched.Coroutines;
import io.cosched.spring.boot.autoconfigure.CoschedAutoConfiguration;
import io.cosched.spring.boot.autoconfigure.security.CoschedSecurityProperties.PasswordCheck;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.security.authentication.AbstractUserDetailsReactiveAuthenticationManager;
import org.springframework.security.authentication.ReactiveAuthenticationManager;
import org.springframework.security.config.ObjectPostProcessor;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * Where Spring Security's reactive password check runs ({@code cosched.security.password-check}).
 * Spring Security checks a presented password on Reactor's {@code boundedElastic} scheduler and lets
 * the request go on from there; cosched puts the check on its compute pool (or, asked to, leaves it
 * on the loop), and its request path sends a coroutine handler back to its connection's loop.
 *
 * <p>Spring Security's WebFlux configuration builds the authentication manager from a
 * {@code ReactiveUserDetailsService} bean and passes it through the {@code ObjectPostProcessor} bean
 * named {@value #POST_PROCESSOR}, which Spring Security itself declares when Micrometer's observation
 * API is present (to observe authentications). cosched wraps that bean: its own step sets the
 * scheduler, then Spring Security's (or the application's) runs as before. Without such a bean it
 * declares one under that name; a post-processor by another name would break Spring Security, which
 * only takes one by that name. An authentication manager the application declares as a bean is left
 * as it is configured.
 */
@AutoConfiguration(
        after = CoschedAutoConfiguration.class,
        // Spring Boot's @EnableWebFluxSecurity may declare the post-processor: its definition must come first
        afterName = "org.springframework.boot.security.autoconfigure.web.reactive.ReactiveWebSecurityAutoConfiguration")
@ConditionalOnClass({AbstractUserDetailsReactiveAuthenticationManager.class, ObjectPostProcessor.class, Schedulers.class
})
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.REACTIVE)
@ConditionalOnBooleanProperty(name = "cosched.enabled", matchIfMissing = true)
@EnableConfigurationProperties(CoschedSecurityProperties.class)
public final class CoschedSecurityAutoConfiguration {

    /** The name Spring Security's {@code ServerHttpSecurityConfiguration} takes its post-processor by. */
    static final String POST_PROCESSOR = "reactiveAuthenticationManagerPostProcessor";

    /** The post-processor when neither Spring Security nor the application declares one: only cosched's step. */
    @Bean(name = POST_PROCESSOR)
    @ConditionalOnMissingBean(name = POST_PROCESSOR)
    static ObjectPostProcessor<ReactiveAuthenticationManager> coschedPasswordCheck() {
        return ObjectPostProcessor.identity(); // the bean post-processor below adds cosched's step to it
    }

    /** Adds cosched's step in front of whichever post-processor carries the name Spring Security looks for. */
    @Bean
    static BeanPostProcessor coschedPasswordCheckPlacement(ObjectProvider<CoschedSecurityProperties> properties) {
        return new BeanPostProcessor() {
            @Override
            @SuppressWarnings("unchecked")
            public Object postProcessAfterInitialization(Object bean, String beanName) {
                if (POST_PROCESSOR.equals(beanName) && bean instanceof ObjectPostProcessor<?> next) {
                    return new PasswordCheckPlacement(
                            properties.getObject().getPasswordCheck(),
                            (ObjectPostProcessor<ReactiveAuthenticationManager>) next);
                }
                return bean;
            }
        };
    }

    /** Gives the user-details authentication manager the scheduler its password check runs on, then hands it on. */
    static final class PasswordCheckPlacement implements ObjectPostProcessor<ReactiveAuthenticationManager> {

        private final PasswordCheck where;
        private final ObjectPostProcessor<ReactiveAuthenticationManager> next;

        PasswordCheckPlacement(PasswordCheck where, ObjectPostProcessor<ReactiveAuthenticationManager> next) {
            this.where = where;
            this.next = next;
        }

        @Override
        public <O extends ReactiveAuthenticationManager> O postProcess(O manager) {
            Scheduler scheduler = scheduler(where);
            if (scheduler != null && manager instanceof AbstractUserDetailsReactiveAuthenticationManager users) {
                users.setScheduler(scheduler);
            }
            return next.postProcess(manager);
        }

        private static @Nullable Scheduler scheduler(PasswordCheck where) {
            return switch (where) {
                case COMPUTE -> ComputeScheduler.INSTANCE;
                case LOOP -> Schedulers.immediate();
                case BOUNDED_ELASTIC -> null;
            };
        }
    }

    /** cosched's compute pool as a Reactor scheduler; it owns no thread, so it is never disposed. */
    private static final class ComputeScheduler {
        static final Scheduler INSTANCE = Schedulers.fromExecutor(Coroutines.computePool());
    }
}
