package io.cosched.spring.boot.autoconfigure.security;

import static org.assertj.core.api.Assertions.assertThat;

import io.cosched.spring.boot.autoconfigure.CoschedAutoConfiguration;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ReactiveWebApplicationContextRunner;
import org.springframework.context.ApplicationContext;
import org.springframework.core.ResolvableType;
import org.springframework.security.authentication.ReactiveAuthenticationManager;
import org.springframework.security.authentication.UserDetailsRepositoryReactiveAuthenticationManager;
import org.springframework.security.authentication.UsernamePasswordAuthenticationToken;
import org.springframework.security.config.ObjectPostProcessor;
import org.springframework.security.core.Authentication;
import org.springframework.security.core.userdetails.MapReactiveUserDetailsService;
import org.springframework.security.core.userdetails.User;
import org.springframework.security.crypto.password.PasswordEncoder;

/**
 * Where Spring Security's password check runs, applied through the post-processor Spring Security's
 * WebFlux configuration looks up by name.
 */
@Timeout(60)
class CoschedSecurityAutoConfigurationTest {

    private final ReactiveWebApplicationContextRunner runner = new ReactiveWebApplicationContextRunner()
            .withPropertyValues("cosched.io.threads=1", "cosched.scheduler.threads=1")
            .withConfiguration(
                    AutoConfigurations.of(CoschedAutoConfiguration.class, CoschedSecurityAutoConfiguration.class));

    @Test
    void byDefaultThePasswordIsCheckedOnCoschedsComputePool() {
        runner.run(context -> assertThat(checkedOn(context)).startsWith("cosched-compute-"));
    }

    @Test
    void onLoopChecksItOnTheThreadThatAsked() {
        runner.withPropertyValues("cosched.security.password-check=loop")
                .run(context -> assertThat(checkedOn(context))
                        .isEqualTo(Thread.currentThread().getName()));
    }

    @Test
    void boundedElasticLeavesSpringSecuritysChoice() {
        runner.withPropertyValues("cosched.security.password-check=bounded-elastic")
                .run(context -> assertThat(checkedOn(context)).startsWith("boundedElastic-"));
    }

    @Test
    void anUnknownPlaceFailsTheStartNamingTheValidOnes() {
        runner.withPropertyValues("cosched.security.password-check=worker")
                .run(context ->
                        assertThat(context).hasFailed().getFailure().rootCause().hasMessageContaining("worker"));
    }

    @Test
    void thePostProcessorSpringSecurityOrTheApplicationDeclaresRunsAfterCoschedsStep() {
        // Spring Security declares one by this name to observe authentications; an application may too
        AtomicReference<String> handedOn = new AtomicReference<>();
        ObjectPostProcessor<ReactiveAuthenticationManager> own = new ObjectPostProcessor<>() {
            @Override
            public <O extends ReactiveAuthenticationManager> O postProcess(O manager) {
                handedOn.set(manager.getClass().getSimpleName());
                return manager;
            }
        };
        runner.withBean(CoschedSecurityAutoConfiguration.POST_PROCESSOR, ObjectPostProcessor.class, () -> own)
                .run(context -> {
                    assertThat(checkedOn(context)).startsWith("cosched-compute-");
                    assertThat(handedOn.get()).isEqualTo("UserDetailsRepositoryReactiveAuthenticationManager");
                });
    }

    @Test
    void anotherKindOfAuthenticationManagerIsLeftAlone() {
        runner.run(context -> {
            ReactiveAuthenticationManager other = a -> reactor.core.publisher.Mono.just(a);
            assertThat(postProcessor(context).postProcess(other)).isSameAs(other);
        });
    }

    @Test
    void withCoschedOffNothingChanges() {
        runner.withPropertyValues("cosched.enabled=false")
                .run(context -> assertThat(context).doesNotHaveBean(CoschedSecurityAutoConfiguration.POST_PROCESSOR));
    }

    /** Authenticates through a manager built as Spring Security builds it, and answers where the password was checked. */
    private static String checkedOn(ApplicationContext context) {
        AtomicReference<String> thread = new AtomicReference<>();
        PasswordEncoder recording = new PasswordEncoder() {
            @Override
            public String encode(CharSequence raw) {
                return raw.toString();
            }

            @Override
            public boolean matches(CharSequence raw, String encoded) {
                thread.set(Thread.currentThread().getName());
                return raw.toString().equals(encoded);
            }
        };
        UserDetailsRepositoryReactiveAuthenticationManager manager =
                new UserDetailsRepositoryReactiveAuthenticationManager(new MapReactiveUserDetailsService(
                        User.withUsername("ann").password("pw").roles("USER").build()));
        manager.setPasswordEncoder(recording);
        Authentication done = postProcessor(context)
                .postProcess(manager)
                .authenticate(UsernamePasswordAuthenticationToken.unauthenticated("ann", "pw"))
                .block(Duration.ofSeconds(10));
        assertThat(done.isAuthenticated()).isTrue();
        return thread.get();
    }

    @SuppressWarnings("unchecked")
    private static ObjectPostProcessor<ReactiveAuthenticationManager> postProcessor(ApplicationContext context) {
        assertThat(context.getBeanNamesForType(ResolvableType.forClassWithGenerics(
                        ObjectPostProcessor.class, ReactiveAuthenticationManager.class)))
                .containsExactly(CoschedSecurityAutoConfiguration.POST_PROCESSOR);
        return (ObjectPostProcessor<ReactiveAuthenticationManager>)
                context.getBean(CoschedSecurityAutoConfiguration.POST_PROCESSOR);
    }
}
