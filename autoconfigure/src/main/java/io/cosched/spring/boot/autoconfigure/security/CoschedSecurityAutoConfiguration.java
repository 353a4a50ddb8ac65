package io.cosched.spring.boot.autoconfigure.security;

import io.cosched.Coroutines;
import io.cosched.spring.boot.autoconfigure.CoschedAutoConfiguration;
import io.cosched.spring.boot.autoconfigure.CoschedProperties;
import io.cosched.spring.boot.autoconfigure.CoschedProperties.PasswordCheck;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
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
 * <p>Applies to the authentication manager Spring Security's WebFlux configuration builds from a
 * {@code ReactiveUserDetailsService} bean, through the {@code ObjectPostProcessor} hook it offers
 * for that, under the name it looks for. An authentication manager the application declares itself
 * is left as it is configured.
 */
@AutoConfiguration(after = CoschedAutoConfiguration.class)
@ConditionalOnClass({AbstractUserDetailsReactiveAuthenticationManager.class, ObjectPostProcessor.class, Schedulers.class})
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.REACTIVE)
@ConditionalOnBooleanProperty(name = "cosched.enabled", matchIfMissing = true)
public final class CoschedSecurityAutoConfiguration {

    /** The name Spring Security's {@code ServerHttpSecurityConfiguration} takes its post-processor by. */
    static final String POST_PROCESSOR = "reactiveAuthenticationManagerPostProcessor";

    @Bean(name = POST_PROCESSOR)
    @ConditionalOnMissingBean(name = POST_PROCESSOR)
    ObjectPostProcessor<ReactiveAuthenticationManager> coschedPasswordCheck(CoschedProperties properties) {
        return new PasswordCheckPlacement(properties.getSecurity().getPasswordCheck());
    }

    /** Gives the user-details authentication manager the scheduler its password check runs on. */
    static final class PasswordCheckPlacement implements ObjectPostProcessor<ReactiveAuthenticationManager> {

        private final PasswordCheck where;

        PasswordCheckPlacement(PasswordCheck where) {
            this.where = where;
        }

        @Override
        public <O extends ReactiveAuthenticationManager> O postProcess(O manager) {
            if (manager instanceof AbstractUserDetailsReactiveAuthenticationManager users) {
                Scheduler scheduler = switch (where) {
                    case COMPUTE -> ComputeScheduler.INSTANCE;
                    case LOOP -> Schedulers.immediate();
                    case BOUNDED_ELASTIC -> null;
                };
                if (scheduler != null) {
                    users.setScheduler(scheduler);
                }
            }
            return manager;
        }
    }

    /** cosched's compute pool as a Reactor scheduler; it owns no thread, so it is never disposed. */
    private static final class ComputeScheduler {
        static final Scheduler INSTANCE = Schedulers.fromExecutor(Coroutines.computePool());
    }
}
