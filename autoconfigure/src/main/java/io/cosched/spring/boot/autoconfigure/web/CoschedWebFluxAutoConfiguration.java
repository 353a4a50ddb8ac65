package io.cosched.spring.boot.autoconfigure.web;

import io.cosched.IOManager;
import io.cosched.spring.boot.autoconfigure.CoschedAutoConfiguration;
import io.cosched.spring.boot.autoconfigure.CoschedProperties;
import io.cosched.spring.boot.autoconfigure.CoschedProperties.WebMode;
import io.cosched.spring.web.CoroutineHandlers;
import io.cosched.spring.web.CoschedWebStats;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.webflux.autoconfigure.WebFluxRegistrations;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.core.Ordered;
import org.springframework.web.reactive.config.BlockingExecutionConfigurer;
import org.springframework.web.reactive.config.WebFluxConfigurer;
import org.springframework.web.reactive.result.method.annotation.RequestMappingHandlerAdapter;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * Blocking WebFlux handlers as coroutines on the event loop that read the request, with request
 * timeouts, load shedding and context propagation. {@code cosched.web.mode} picks the handlers.
 *
 * <p>The {@link CoroutineHandlers} helper for functional endpoints exists in every reactive web
 * application, so that switching coroutine handlers off ({@code cosched.web.mode=off},
 * {@code cosched.enabled=false}) never breaks one that uses it: it then runs handlers on Reactor's
 * {@code boundedElastic} scheduler, as WebFlux code without cosched would.
 */
@AutoConfiguration(after = CoschedAutoConfiguration.class)
@ConditionalOnClass({WebFluxConfigurer.class, Schedulers.class})
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.REACTIVE)
public final class CoschedWebFluxAutoConfiguration {

    /** Without coroutine handlers: the helper runs blocking handlers on boundedElastic. */
    @Bean
    @ConditionalOnMissingBean
    CoroutineHandlers coroutineHandlers() {
        return new CoroutineHandlers(Schedulers.boundedElastic());
    }

    @org.springframework.context.annotation.Configuration(proxyBeanMethods = false)
    @ConditionalOnBean(IOManager.class)
    @Conditional(OnCoroutineHandlersCondition.class)
    static final class CoroutineHandlerConfiguration {

        @Bean
        @ConditionalOnMissingBean
        CoschedWebStats coschedWebStats() {
            return new CoschedWebStats();
        }

        @Bean
        CoroutineWebExecution coschedCoroutineWebExecution(IOManager io, CoschedWebStats stats, CoschedProperties properties) {
            CoschedProperties.Web web = properties.getWeb();
            return new CoroutineWebExecution(new CoroutineHandlerExecutor(io, stats, web.getRequestTimeout(),
                    web.getMaxInFlight(), ContextRestorer.detect()),
                    new CoroutineHandlerSelector(web.getMode() == WebMode.ANNOTATED));
        }

        @Bean
        WebFluxConfigurer coschedWebFluxConfigurer(CoroutineWebExecution execution) {
            return new CoschedWebFluxConfigurer(execution.executor(), execution.selector());
        }

        @Bean
        CoschedWebFilter coschedWebFilter(CoschedWebStats stats, CoschedProperties properties) {
            return new CoschedWebFilter(stats, properties.getWeb().getRequestTimeout());
        }

        @Bean
        @ConditionalOnMissingBean
        CoroutineHandlers coschedCoroutineHandlers(CoroutineWebExecution execution) {
            return new CoroutineHandlers(execution.scheduler());
        }

        /**
         * Spring Boot's way to supply the annotated-handler adapter: ours writes a coroutine
         * handler's response on the loop. Backs off when the application has its own registrations;
         * handlers then still run as coroutines, only their responses are written from the coroutine.
         */
        @org.springframework.context.annotation.Configuration(proxyBeanMethods = false)
        @ConditionalOnClass(WebFluxRegistrations.class)
        @ConditionalOnMissingBean(WebFluxRegistrations.class)
        static final class LoopResultConfiguration {

            @Bean
            WebFluxRegistrations coschedWebFluxRegistrations(IOManager io, CoroutineWebExecution execution) {
                return new WebFluxRegistrations() {
                    @Override
                    public RequestMappingHandlerAdapter getRequestMappingHandlerAdapter() {
                        return new LoopResultHandlerAdapter(io, execution.selector());
                    }
                };
            }
        }
    }

    /** The executor and the Reactor scheduler on top of it; a holder, so that no Executor bean exists. */
    static final class CoroutineWebExecution {
        private final CoroutineHandlerExecutor executor;
        private final CoroutineHandlerSelector selector;
        private final Scheduler scheduler;

        CoroutineWebExecution(CoroutineHandlerExecutor executor, CoroutineHandlerSelector selector) {
            RequestContextHook.install();
            this.executor = executor;
            this.selector = selector;
            this.scheduler = Schedulers.fromExecutor(executor);
        }

        CoroutineHandlerSelector selector() {
            return selector;
        }

        CoroutineHandlerExecutor executor() {
            return executor;
        }

        Scheduler scheduler() {
            return scheduler;
        }
    }

    /**
     * Hands blocking handlers to the coroutine executor. Ordered last so that it wins over Spring
     * Boot's own configurer, which sets a virtual-thread executor when
     * {@code spring.threads.virtual.enabled=true} and does not back off.
     */
    static final class CoschedWebFluxConfigurer implements WebFluxConfigurer, Ordered {
        private final CoroutineHandlerExecutor executor;
        private final CoroutineHandlerSelector selector;

        CoschedWebFluxConfigurer(CoroutineHandlerExecutor executor, CoroutineHandlerSelector selector) {
            this.executor = executor;
            this.selector = selector;
        }

        @Override
        public void configureBlockingExecution(BlockingExecutionConfigurer configurer) {
            configurer.setExecutor(executor);
            configurer.setControllerMethodPredicate(selector);
        }

        @Override
        public int getOrder() {
            return Ordered.LOWEST_PRECEDENCE;
        }
    }
}
