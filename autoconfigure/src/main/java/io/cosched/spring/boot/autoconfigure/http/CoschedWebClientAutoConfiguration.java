package io.cosched.spring.boot.autoconfigure.http;

import io.cosched.IOManager;
import io.cosched.spring.boot.autoconfigure.CoschedAutoConfiguration;
import io.cosched.spring.http.client.reactive.LoopClientHttpConnector;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.http.client.reactive.ReactorClientHttpConnectorBuilder;
import org.springframework.context.annotation.Bean;
import reactor.core.publisher.Mono;

/**
 * A {@code WebClient} built on Spring Boot's connector sends a coroutine's calls over cosched's own
 * HTTP client, on the coroutine's loop: Spring Boot's {@code ClientHttpConnectorBuilder}, once it is
 * Reactor Netty's (Boot's default, with the application's customizers), is wrapped in a
 * {@link LoopClientHttpConnectorBuilder}. Reactive callers keep Reactor Netty. Off with
 * {@code cosched.web-client.loop-client=false} (or {@code cosched.web-client.enabled=false}); a builder
 * for another client (Jetty, the JDK's, Apache's) is left alone.
 */
@AutoConfiguration(after = CoschedAutoConfiguration.class)
@ConditionalOnClass({ReactorClientHttpConnectorBuilder.class, LoopClientHttpConnector.class, Mono.class})
@ConditionalOnBean(IOManager.class)
@ConditionalOnBooleanProperty(name = "cosched.enabled", matchIfMissing = true)
@ConditionalOnBooleanProperty(
        prefix = "cosched.web-client",
        name = {"enabled", "loop-client"},
        matchIfMissing = true)
// the loop client's connections are kept as long as RestClient's: cosched.http.client.idle-timeout
@EnableConfigurationProperties({CoschedWebClientProperties.class, CoschedHttpClientProperties.class})
public final class CoschedWebClientAutoConfiguration {

    @Bean
    static BeanPostProcessor coschedLoopClientHttpConnectorBuilderPostProcessor(
            ObjectProvider<IOManager> io, ObjectProvider<CoschedHttpClientProperties> properties) {
        return new BeanPostProcessor() {
            @Override
            public Object postProcessAfterInitialization(Object bean, String beanName) {
                if (!(bean instanceof ReactorClientHttpConnectorBuilder reactor)) {
                    return bean;
                }
                IOManager manager = io.getIfUnique();
                if (manager == null) {
                    return bean;
                }
                return new LoopClientHttpConnectorBuilder(
                        reactor, manager, properties.getObject().getIdleTimeout());
            }
        };
    }
}
