package io.cosched.spring.boot.autoconfigure.web;

import static org.assertj.core.api.Assertions.assertThat;

import io.cosched.IOManager;
import io.cosched.spring.boot.autoconfigure.CoschedAutoConfiguration;
import io.cosched.spring.web.CoroutineHandlers;
import io.cosched.spring.web.CoschedWebStats;
import io.cosched.spring.web.netty.IOManagerLoopResources;
import io.cosched.spring.web.server.CoroutineRequests;
import io.cosched.spring.web.stream.StreamLimits;
import io.cosched.spring.web.stream.StreamingSupport;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.context.runner.ReactiveWebApplicationContextRunner;
import org.springframework.boot.webflux.autoconfigure.WebFluxRegistrations;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.Ordered;
import org.springframework.http.client.ReactorResourceFactory;
import org.springframework.web.reactive.config.WebFluxConfigurer;
import org.springframework.web.reactive.result.method.annotation.RequestMappingHandlerAdapter;
import org.springframework.web.server.WebExceptionHandler;
import reactor.core.scheduler.Schedulers;

/**
 * The WebFlux integration's beans: what exists in each mode, that each backs off for the application's own, and
 * that nothing is applied outside a reactive web application. The server's loops: CoschedReactorNettyAutoConfigurationTest.
 */
@Timeout(60)
class CoschedWebFluxAutoConfigurationTest {

    private final ReactiveWebApplicationContextRunner runner = new ReactiveWebApplicationContextRunner()
            .withPropertyValues("cosched.io.threads=1", "cosched.scheduler.threads=1")
            .withConfiguration(AutoConfigurations.of(
                    CoschedAutoConfiguration.class,
                    CoschedReactorNettyAutoConfiguration.class,
                    CoschedWebStreamingAutoConfiguration.class,
                    CoschedWebFluxAutoConfiguration.class));

    @Test
    void byDefaultTheServerLoopsTheRequestHandlingThe503sAndTheHelperAreThere() {
        runner.run(context -> {
            assertThat(context.getBean(ReactorResourceFactory.class).getLoopResources())
                    .isInstanceOf(IOManagerLoopResources.class);
            assertThat(context)
                    .hasSingleBean(CoschedWebStats.class)
                    .hasSingleBean(CoroutineRequests.class)
                    .hasSingleBean(CoroutineHandlers.class)
                    .hasSingleBean(StreamingSupport.class);
            // the 503s of timed-out and shed requests, and the statuses of streamed bodies' failures
            assertThat(context.getBeansOfType(WebExceptionHandler.class))
                    .containsOnlyKeys("coschedUnavailableResponses", "coschedStreamErrors");
            assertThat(context.getBeansOfType(WebExceptionHandler.class).values())
                    .allSatisfy(h -> assertThat(((Ordered) h).getOrder())
                            .as("ahead of Boot's error handler")
                            .isLessThan(-1));
            assertThat(context.getBeansOfType(WebFluxConfigurer.class))
                    .containsOnlyKeys("coschedWebFluxConfigurer", "coschedStreamingConfigurer");
            // open streams end as the server's graceful shutdown begins: stopped after the shutdown delay, before it
            assertThat(context.getBean(StreamShutdownLifecycle.class).getPhase())
                    .isGreaterThan(
                            org.springframework.boot.web.server.context.WebServerApplicationContext
                                    .GRACEFUL_SHUTDOWN_PHASE)
                    .isLessThan(org.springframework.context.SmartLifecycle.DEFAULT_PHASE);
            // the handler executor is no bean: as an Executor it would take over @Async
            assertThat(context.getBeansOfType(java.util.concurrent.Executor.class)
                            .values())
                    .allMatch(e -> e instanceof io.cosched.Scheduler);
        });
    }

    @Test
    void shedsBeforeWebFluxOnlyWithAnInFlightLimitAndUnlessSwitchedOff() {
        runner.run(context -> assertThat(context).doesNotHaveBean("coschedEarlyShedding"));
        runner.withPropertyValues("cosched.web.max-in-flight=10")
                .run(context ->
                        assertThat(context).hasBean("coschedEarlyShedding").hasBean("coschedEarlySheddingRoutes"));
        runner.withPropertyValues("cosched.web.max-in-flight=10", "cosched.web.shed-before-webflux=false")
                .run(context -> assertThat(context).doesNotHaveBean("coschedEarlyShedding"));
    }

    @Test
    void suppliesTheAdapterThatStartsCoroutinesUnlessTheApplicationHasItsOwnRegistrations() {
        runner.run(context -> assertThat(
                        context.getBean(WebFluxRegistrations.class).getRequestMappingHandlerAdapter())
                .isNotExactlyInstanceOf(RequestMappingHandlerAdapter.class)
                .hasSameClassAs(context.getBean(CoroutineRequests.class).handlerAdapter()));
        WebFluxRegistrations own = new WebFluxRegistrations() {};
        runner.withBean(WebFluxRegistrations.class, () -> own)
                .run(context ->
                        assertThat(context.getBean(WebFluxRegistrations.class)).isSameAs(own));
        runner.withPropertyValues("cosched.web.mode=off")
                .run(context -> assertThat(context).doesNotHaveBean(WebFluxRegistrations.class));
    }

    @Test
    void backsOffWhenTheApplicationDefinesItsOwnRequestsAndHelper() {
        CoroutineHandlers handlers = new CoroutineHandlers(Schedulers.immediate());
        runner.withUserConfiguration(OwnRequests.class)
                .withBean(CoroutineHandlers.class, () -> handlers)
                .run(context -> {
                    CoroutineRequests own = context.getBean(CoroutineRequests.class);
                    assertThat(own).isSameAs(context.getBean(OwnRequests.class).requests);
                    assertThat(context.getBean(CoschedWebStats.class))
                            .as("the numbers of the requests that run")
                            .isSameAs(own.stats());
                    assertThat(context.getBean(CoroutineHandlers.class)).isSameAs(handlers);
                });
    }

    @Configuration(proxyBeanMethods = false)
    static class OwnRequests {

        CoroutineRequests requests;

        @Bean
        CoroutineRequests myRequests(IOManager io) {
            requests = new CoroutineRequests(io, Duration.ofSeconds(5), 10, true, true, StreamLimits.DEFAULT);
            return requests;
        }
    }

    @Test
    void offModeKeepsOnlyTheServerLoopsAndAFallbackHelper() {
        runner.withPropertyValues("cosched.web.mode=off").run(context -> {
            assertThat(context)
                    .hasSingleBean(ReactorResourceFactory.class)
                    .hasSingleBean(CoroutineHandlers.class)
                    .doesNotHaveBean(CoroutineRequests.class)
                    .doesNotHaveBean(CoschedWebStats.class)
                    .doesNotHaveBean(StreamShutdownLifecycle.class);
            // streamed bodies and answers still work, detached from any coroutine request
            assertThat(context.getBeansOfType(WebFluxConfigurer.class)).containsOnlyKeys("coschedStreamingConfigurer");
            assertThat(context).hasSingleBean(StreamingSupport.class);
        });
    }

    @Test
    void withCoschedDisabledTheHelperStillExistsAndNothingElse() {
        runner.withPropertyValues("cosched.enabled=false").run(context -> {
            assertThat(context)
                    .hasSingleBean(CoroutineHandlers.class)
                    .hasSingleBean(StreamingSupport.class)
                    .doesNotHaveBean(ReactorResourceFactory.class)
                    .doesNotHaveBean(CoroutineRequests.class);
        });
    }

    @Test
    void appliesNothingWithoutSpringWebFlux() {
        runner.withClassLoader(new FilteredClassLoader(WebFluxConfigurer.class))
                .run(context -> assertThat(context)
                        .doesNotHaveBean(CoroutineRequests.class)
                        .doesNotHaveBean(CoroutineHandlers.class)
                        .doesNotHaveBean(StreamingSupport.class));
    }

    @Test
    void appliesNothingWithoutReactorsSchedulers() {
        // the fallback helper runs handlers on Reactor's boundedElastic: without Reactor there is nothing to offer
        runner.withClassLoader(new FilteredClassLoader(Schedulers.class))
                .run(context -> assertThat(context)
                        .doesNotHaveBean(CoroutineRequests.class)
                        .doesNotHaveBean(CoroutineHandlers.class));
    }

    @Test
    void appliesNothingInAnApplicationThatIsNotReactive() {
        new ApplicationContextRunner()
                .withPropertyValues("cosched.io.threads=1", "cosched.scheduler.threads=1")
                .withConfiguration(AutoConfigurations.of(
                        CoschedAutoConfiguration.class,
                        CoschedWebStreamingAutoConfiguration.class,
                        CoschedWebFluxAutoConfiguration.class))
                .run(context -> assertThat(context)
                        .hasSingleBean(IOManager.class)
                        .doesNotHaveBean(CoroutineRequests.class)
                        .doesNotHaveBean(CoroutineHandlers.class));
    }

    @Test
    void runsNoCoroutineHandlersWhenCoschedIsDisabledEvenBesideTheApplicationsOwnIOManager() {
        runner.withPropertyValues("cosched.enabled=false")
                .withBean(
                        IOManager.class,
                        () -> IOManager.builder().name("own").threads(1).build())
                .run(context -> assertThat(context)
                        .hasSingleBean(CoroutineHandlers.class)
                        .doesNotHaveBean(CoroutineRequests.class));
    }
}
