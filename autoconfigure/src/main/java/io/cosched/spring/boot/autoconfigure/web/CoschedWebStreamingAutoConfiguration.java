package io.cosched.spring.boot.autoconfigure.web;

import io.cosched.IOManager;
import io.cosched.spring.boot.autoconfigure.CoschedAutoConfiguration;
import io.cosched.spring.web.stream.StreamLimits;
import io.cosched.spring.web.stream.StreamingSupport;
import java.util.concurrent.Executor;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.core.ReactiveAdapterRegistry;
import org.springframework.http.codec.ServerCodecConfigurer;
import org.springframework.web.reactive.HandlerResultHandler;
import org.springframework.web.reactive.accept.RequestedContentTypeResolver;
import org.springframework.web.reactive.config.WebFluxConfigurer;
import org.springframework.web.reactive.result.method.annotation.ArgumentResolverConfigurer;
import org.springframework.web.server.WebExceptionHandler;
import reactor.core.scheduler.Schedulers;

/**
 * Streaming in blocking style in every reactive web application ({@link StreamingSupport} does the work; this class
 * only wires it): {@code InputStream} and {@code MultipartStream} arguments, {@code @RequestBody InputStream},
 * {@code StreamingResponseBody} and {@code EventStream} answers, their errors answered as Spring answers a
 * {@code @RequestBody}'s. With cosched's coroutine handlers ({@link CoschedWebFluxAutoConfiguration}) each stream is
 * bound to its request; with them off, or {@code cosched.enabled=false}, streams still work, detached.
 * {@code cosched.web.stream.*} sets their limits, {@code spring.webflux.multipart.*} those of a {@code MultipartStream}.
 */
@AutoConfiguration(
        after = CoschedAutoConfiguration.class,
        afterName = "org.springframework.boot.webflux.autoconfigure.WebFluxAutoConfiguration")
@ConditionalOnClass({WebFluxConfigurer.class, Schedulers.class})
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.REACTIVE)
@EnableConfigurationProperties(CoschedWebProperties.class)
public final class CoschedWebStreamingAutoConfiguration {

    /**
     * Streaming in blocking style ({@code InputStream} and {@code MultipartStream} arguments,
     * {@code StreamingResponseBody} and {@code EventStream} answers), in every reactive web application: bound to
     * the request in a coroutine request; elsewhere detached, their producers run as coroutines of the IOManager
     * (on boundedElastic when cosched is off), so that switching cosched's handlers off never breaks them.
     */
    @Bean
    @ConditionalOnMissingBean
    StreamingSupport coschedStreaming(
            CoschedWebProperties properties, ObjectProvider<IOManager> io, BeanFactory beans) {
        StreamLimits limits = properties.getStream().limits();
        IOManager loops = io.getIfAvailable();
        Executor producers =
                loops != null ? loops : task -> Schedulers.boundedElastic().schedule(task);
        return new StreamingSupport(limits, producers, BootMultipartLimits.of(beans));
    }

    @Bean
    WebFluxConfigurer coschedStreamingConfigurer(
            StreamingSupport streaming, ObjectProvider<ServerCodecConfigurer> codecs) {
        return new WebFluxConfigurer() {
            @Override
            public void configureArgumentResolvers(ArgumentResolverConfigurer configurer) {
                // the codecs are asked for at the first streamed multipart request: they are made after this
                configurer.addCustomResolver(
                        streaming.argumentResolver(() -> codecs.getObject().getReaders()));
            }

            @Override
            public void configureHttpMessageCodecs(ServerCodecConfigurer configurer) {
                configurer.customCodecs().register(streaming.bodyReader());
            }
        };
    }

    /** Writes streamed answers with WebFlux's own codecs and content negotiation, where WebFlux's configuration is. */
    @org.springframework.context.annotation.Configuration(proxyBeanMethods = false)
    @ConditionalOnBean(ServerCodecConfigurer.class)
    static final class StreamResultConfiguration {

        @Bean
        HandlerResultHandler coschedStreamResultHandler(
                StreamingSupport streaming,
                ServerCodecConfigurer codecs,
                @Qualifier("webFluxContentTypeResolver") RequestedContentTypeResolver contentTypes,
                @Qualifier("webFluxAdapterRegistry") ReactiveAdapterRegistry adapters) {
            return streaming.resultHandler(codecs, contentTypes, adapters);
        }
    }

    @Bean
    WebExceptionHandler coschedStreamErrors(StreamingSupport streaming) {
        return streaming.exceptionHandler();
    }
}
