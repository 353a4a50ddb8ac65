package io.cosched.spring.boot.autoconfigure.web;

import static org.assertj.core.api.Assertions.assertThat;

import io.cosched.spring.boot.autoconfigure.CoschedAutoConfiguration;
import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ReactiveWebApplicationContextRunner;
import org.springframework.boot.webflux.autoconfigure.WebFluxAutoConfiguration;
import org.springframework.boot.webflux.autoconfigure.WebSessionIdResolverAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.mock.http.server.reactive.MockServerHttpRequest;
import org.springframework.mock.web.server.MockServerWebExchange;
import org.springframework.session.ReactiveMapSessionRepository;
import org.springframework.session.config.annotation.web.server.EnableSpringWebSession;
import org.springframework.session.web.server.session.SpringSessionWebSessionStore;
import org.springframework.web.server.WebSession;
import org.springframework.web.server.session.DefaultWebSessionManager;
import org.springframework.web.server.session.WebSessionManager;

/** WebFlux's session manager: cosched's store where Spring Boot would make its own, with Boot's settings. */
@Timeout(60)
class CoschedWebSessionAutoConfigurationTest {

    private final ReactiveWebApplicationContextRunner runner = new ReactiveWebApplicationContextRunner()
            .withPropertyValues("cosched.io.threads=1", "cosched.scheduler.threads=1")
            .withConfiguration(AutoConfigurations.of(
                    CoschedAutoConfiguration.class,
                    CoschedWebSessionAutoConfiguration.class,
                    WebSessionIdResolverAutoConfiguration.class,
                    WebFluxAutoConfiguration.class));

    @Test
    void aNewSessionIsMadeOnTheThreadThatAsksWithBootsTimeoutAndCookie() {
        runner.withPropertyValues("server.reactive.session.timeout=7m", "server.reactive.session.cookie.name=SID")
                .run(context -> {
                    WebSessionManager manager = context.getBean(WebSessionManager.class);
                    MockServerWebExchange exchange = MockServerWebExchange.from(MockServerHttpRequest.get("/"));
                    AtomicReference<Thread> madeOn = new AtomicReference<>();
                    WebSession session = manager.getSession(exchange)
                            .doOnNext(s -> madeOn.set(Thread.currentThread()))
                            .block(Duration.ofSeconds(5));
                    assertThat(madeOn.get())
                            .as("no hop to boundedElastic and parallel")
                            .isSameAs(Thread.currentThread());
                    assertThat(session.getMaxIdleTime()).isEqualTo(Duration.ofMinutes(7));
                    session.getAttributes().put("k", "v");
                    exchange.getResponse().setComplete().block(Duration.ofSeconds(5)); // saves it, sets the cookie
                    assertThat(exchange.getResponse()
                                    .getCookies()
                                    .getFirst("SID")
                                    .getValue())
                            .isEqualTo(session.getId());
                });
    }

    @Test
    void inlineSessionsOffKeepsSpringBootsSessionManager() {
        runner.withPropertyValues("cosched.web.inline-sessions=false").run(context -> {
            WebSessionManager manager = context.getBean(WebSessionManager.class);
            MockServerWebExchange exchange = MockServerWebExchange.from(MockServerHttpRequest.get("/"));
            AtomicReference<String> madeOn = new AtomicReference<>();
            manager.getSession(exchange)
                    .doOnNext(s -> madeOn.set(Thread.currentThread().getName()))
                    .block(Duration.ofSeconds(5));
            assertThat(madeOn.get()).as("Spring's store").startsWith("parallel-");
        });
    }

    @Test
    void springSessionsManagerWinsWhenTheApplicationTurnsItOn() {
        runner.withUserConfiguration(SpringSessionConfiguration.class).run(context -> {
            assertThat(context).hasNotFailed();
            WebSessionManager manager = context.getBean(WebSessionManager.class);
            assertThat(((DefaultWebSessionManager) manager).getSessionStore())
                    .isInstanceOf(SpringSessionWebSessionStore.class);
        });
    }

    @Configuration(proxyBeanMethods = false)
    @EnableSpringWebSession
    static class SpringSessionConfiguration {
        @Bean
        ReactiveMapSessionRepository sessionRepository() {
            return new ReactiveMapSessionRepository(new ConcurrentHashMap<>());
        }
    }

    @Test
    void backsOffForTheApplicationsOwnSessionManager() {
        DefaultWebSessionManager own = new DefaultWebSessionManager();
        runner.withBean("webSessionManager", WebSessionManager.class, () -> own)
                .run(context ->
                        assertThat(context.getBean(WebSessionManager.class)).isSameAs(own));
    }
}
