package io.cosched.spring.boot.autoconfigure.http;

import io.cosched.IOManager;
import io.cosched.spring.boot.autoconfigure.CoschedAutoConfiguration;
import io.cosched.spring.http.client.LoopClientHttpRequestFactory;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnExpression;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.http.client.ClientHttpRequestFactoryBuilder;
import org.springframework.context.annotation.Bean;

/**
 * {@code RestClient} and {@code RestTemplate} built from Spring Boot's builders send their requests
 * over connections on cosched's event loops: a call from a coroutine uses a connection of its own
 * loop, so the loop that reads the response resumes it. Boot looks up one
 * {@link ClientHttpRequestFactoryBuilder} bean for all its blocking clients; this one comes first so
 * that Boot's own backs off, and it backs off itself when the application defines one, chooses a
 * factory with {@code spring.http.clients.imperative.factory}, or sets
 * {@code cosched.http.client.enabled=false}.
 */
@AutoConfiguration(
        after = CoschedAutoConfiguration.class,
        beforeName = {
            "org.springframework.boot.http.client.autoconfigure.imperative.ImperativeHttpClientAutoConfiguration",
            "org.springframework.boot.restclient.autoconfigure.RestClientAutoConfiguration",
            "org.springframework.boot.restclient.autoconfigure.RestTemplateAutoConfiguration"
        })
@ConditionalOnClass({ClientHttpRequestFactoryBuilder.class, LoopClientHttpRequestFactory.class})
@ConditionalOnBean(IOManager.class)
@ConditionalOnBooleanProperty(name = "cosched.enabled", matchIfMissing = true)
@ConditionalOnBooleanProperty(name = "cosched.http.client.enabled", matchIfMissing = true)
// an explicit choice of factory is the user's to make
@ConditionalOnExpression("'${spring.http.clients.imperative.factory:}'.isEmpty()")
@EnableConfigurationProperties(CoschedHttpClientProperties.class)
public final class CoschedHttpClientAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean(ClientHttpRequestFactoryBuilder.class)
    LoopClientHttpRequestFactoryBuilder coschedClientHttpRequestFactoryBuilder(
            IOManager io, CoschedHttpClientProperties client) {
        return new LoopClientHttpRequestFactoryBuilder(io, client.getIdleTimeout());
    }
}
