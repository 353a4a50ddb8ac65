package io.cosched.spring.boot.autoconfigure.web;

import io.cosched.IOManager;
import io.cosched.spring.boot.autoconfigure.CoschedAutoConfiguration;
import io.cosched.spring.boot.autoconfigure.CoschedCustomizer;
import io.cosched.spring.web.CoroutineHandlers;
import io.cosched.spring.web.CoschedWebStats;
import io.cosched.spring.web.context.RequestScopes;
import io.cosched.spring.web.server.CoroutineRequests;
import io.cosched.spring.web.shedding.EarlyShedding;
import io.cosched.spring.web.stream.StreamingSupport;
import io.micrometer.observation.ObservationRegistry;
import java.util.ArrayList;
import java.util.List;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.autoconfigure.context.LifecycleProperties;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.reactor.netty.NettyServerCustomizer;
import org.springframework.boot.webflux.autoconfigure.WebFluxRegistrations;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.AnnotationAwareOrderComparator;
import org.springframework.core.annotation.Order;
import org.springframework.core.env.Environment;
import org.springframework.http.HttpStatus;
import org.springframework.web.reactive.HandlerMapping;
import org.springframework.web.reactive.config.BlockingExecutionConfigurer;
import org.springframework.web.reactive.config.WebFluxConfigurer;
import org.springframework.web.reactive.result.method.annotation.RequestMappingHandlerAdapter;
import org.springframework.web.server.WebExceptionHandler;
import reactor.core.scheduler.Schedulers;

/**
 * Blocking WebFlux handlers as coroutines on the event loop that read the request, with request
 * timeouts, load shedding, cancellation and context propagation ({@link CoroutineRequests} does the
 * work; this class only wires it). {@code cosched.web.mode} picks the handlers.
 *
 * <p>The {@link CoroutineHandlers} helper for functional endpoints exists in every reactive web
 * application, so that switching coroutine handlers off ({@code cosched.web.mode=off},
 * {@code cosched.enabled=false}) never breaks one that uses it: it then runs handlers on Reactor's
 * {@code boundedElastic} scheduler, as WebFlux code without cosched would.
 */
@AutoConfiguration(
        after = {CoschedAutoConfiguration.class, CoschedWebStreamingAutoConfiguration.class},
        afterName = "org.springframework.boot.webflux.autoconfigure.WebFluxAutoConfiguration")
@ConditionalOnClass({WebFluxConfigurer.class, Schedulers.class})
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.REACTIVE)
@EnableConfigurationProperties(CoschedWebProperties.class)
public final class CoschedWebFluxAutoConfiguration {

    /**
     * Without coroutine handlers: the helper runs blocking handlers on boundedElastic, streamed bodies detached
     * ({@link CoschedWebStreamingAutoConfiguration}'s support).
     */
    @Bean
    @ConditionalOnMissingBean
    CoroutineHandlers coroutineHandlers(StreamingSupport streaming) {
        return new CoroutineHandlers(streaming.runnerOn(Schedulers.boundedElastic()));
    }

    /**
     * Task scopes opened by a request's code end with its deadline and carry its context (MDC, observation,
     * security context, locale) into their subtasks. First in order, so that a customizer of the application can
     * set a hook of its own.
     */
    @Bean
    @Order(Ordered.HIGHEST_PRECEDENCE)
    CoschedCustomizer coschedRequestScopes(ObjectProvider<ObservationRegistry> observations) {
        RequestScopes scopes = new RequestScopes(() -> observations.getIfAvailable(() -> ObservationRegistry.NOOP));
        return new CoschedCustomizer() {
            @Override
            public void customize(IOManager.Builder builder) {
                builder.scopeHook(scopes);
            }
        };
    }

    @org.springframework.context.annotation.Configuration(proxyBeanMethods = false)
    @ConditionalOnBean(IOManager.class)
    @ConditionalOnBooleanProperty(name = "cosched.enabled", matchIfMissing = true)
    @Conditional(OnCoroutineHandlersCondition.class)
    static final class CoroutineHandlerConfiguration {

        @Bean
        @ConditionalOnMissingBean
        CoroutineRequests coschedCoroutineRequests(IOManager io, CoschedWebProperties web) {
            return CoroutineRequests.builder(io)
                    .timeout(web.getRequestTimeout())
                    .admission(web.admissionControl())
                    .cancelOnDisconnect(web.isCancelOnDisconnect())
                    .annotatedOnly(web.getMode() == CoschedWebProperties.Mode.ANNOTATED)
                    .streams(web.getStream().limits())
                    .build();
        }

        /** Ends the open streams when the context closes, as the web server's graceful shutdown begins. */
        @Bean
        StreamShutdownLifecycle coschedStreamShutdown(
                CoroutineRequests requests, CoschedWebProperties web, ObjectProvider<LifecycleProperties> lifecycle) {
            return new StreamShutdownLifecycle(
                    requests,
                    web.getStream().getShutdownGrace(),
                    lifecycle.getIfAvailable(LifecycleProperties::new).getTimeoutPerShutdownPhase());
        }

        /** The numbers the endpoint, the meters and readiness read: counted by the requests, read-only. */
        @Bean
        CoschedWebStats coschedWebStats(CoroutineRequests requests) {
            return requests.stats();
        }

        @Bean
        WebFluxConfigurer coschedWebFluxConfigurer(CoroutineRequests requests) {
            return new CoschedWebFluxConfigurer(requests);
        }

        @Bean
        WebExceptionHandler coschedUnavailableResponses(CoroutineRequests requests, CoschedWebProperties web) {
            return requests.exceptionHandler(HttpStatus.valueOf(web.getRequestTimeoutStatus()));
        }

        @Bean
        @ConditionalOnMissingBean
        CoroutineHandlers coschedCoroutineHandlers(CoroutineRequests requests) {
            return new CoroutineHandlers(requests);
        }

        /**
         * Sheds coroutine requests over the in-flight limit (max-in-flight, or an adaptive one) in each connection's pipeline,
         * before WebFlux ({@code cosched.web.shed-before-webflux}); the routes are read from the handler
         * mappings once every singleton exists, before the server starts.
         */
        @org.springframework.context.annotation.Configuration(proxyBeanMethods = false)
        @ConditionalOnClass(NettyServerCustomizer.class)
        @Conditional(OnInFlightLimitCondition.class)
        @ConditionalOnBooleanProperty(name = "cosched.web.shed-before-webflux", matchIfMissing = true)
        static final class EarlySheddingConfiguration {

            @Bean
            EarlyShedding coschedEarlySheddingHandler(CoroutineRequests requests) {
                return new EarlyShedding(requests);
            }

            @Bean
            NettyServerCustomizer coschedEarlyShedding(EarlyShedding shedding) {
                return server -> server.doOnChannelInit((observer, channel, remote) -> shedding.install(channel));
            }

            @Bean
            SmartInitializingSingleton coschedEarlySheddingRoutes(
                    EarlyShedding shedding, ObjectProvider<HandlerMapping> handlerMappings, Environment environment) {
                return () -> {
                    List<HandlerMapping> mappings =
                            new ArrayList<>(handlerMappings.stream().toList());
                    AnnotationAwareOrderComparator.sort(mappings); // DispatcherHandler's order
                    shedding.useRoutes(mappings, environment.getProperty("spring.webflux.base-path", ""));
                };
            }
        }

        /**
         * Spring Boot's way to supply the annotated-handler adapter: cosched's starts each coroutine
         * handler's coroutine itself. Backs off when the application has its own registrations; its
         * coroutine handlers then run through Spring's blocking execution, still as coroutines, but
         * without request timeout or cancellation (docs/web.md).
         */
        @org.springframework.context.annotation.Configuration(proxyBeanMethods = false)
        @ConditionalOnClass(WebFluxRegistrations.class)
        @ConditionalOnMissingBean(WebFluxRegistrations.class)
        static final class HandlerAdapterConfiguration {

            @Bean
            WebFluxRegistrations coschedWebFluxRegistrations(CoroutineRequests requests) {
                return new WebFluxRegistrations() {
                    @Override
                    public RequestMappingHandlerAdapter getRequestMappingHandlerAdapter() {
                        return requests.handlerAdapter();
                    }
                };
            }
        }
    }

    /**
     * Gives Spring's blocking execution cosched's executor and handler selection. Ordered last so that
     * it wins over Spring Boot's own configurer, which sets a virtual-thread executor when
     * {@code spring.threads.virtual.enabled=true} and does not back off.
     */
    static final class CoschedWebFluxConfigurer implements WebFluxConfigurer, Ordered {
        private final CoroutineRequests requests;

        CoschedWebFluxConfigurer(CoroutineRequests requests) {
            this.requests = requests;
        }

        @Override
        public void configureBlockingExecution(BlockingExecutionConfigurer configurer) {
            configurer.setExecutor(requests.blockingExecutor());
            configurer.setControllerMethodPredicate(requests.selector());
        }

        @Override
        public int getOrder() {
            return Ordered.LOWEST_PRECEDENCE;
        }
    }
}
