package io.cosched.sample;

import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.annotation.Order;
import org.springframework.security.core.context.ReactiveSecurityContextHolder;
import org.springframework.security.core.context.SecurityContext;
import org.springframework.web.server.WebFilter;
import reactor.core.publisher.Hooks;
import reactor.core.publisher.Mono;

/**
 * What this service needs to run on Spring's own virtual threads, without cosched ({@code cosched.enabled=false},
 * the benchmark's peer): WebFlux keeps the security context in the Reactor context, where method security on a
 * blocking service does not look. This filter puts it under the key of Spring Security's
 * {@code SecurityContextHolderThreadLocalAccessor}, and Reactor's automatic context propagation sets
 * {@code SecurityContextHolder} on the virtual thread that runs the handler. With cosched none of it is needed.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnBooleanProperty(name = "cosched.enabled", havingValue = false)
class VirtualThreadsSecurityBridge {

    VirtualThreadsSecurityBridge() {
        Hooks.enableAutomaticContextPropagation();
    }

    @Bean
    @Order(-99) // right after Spring Security's filter chain (-100)
    WebFilter securityContextToThreadLocal() {
        return (exchange, chain) -> ReactiveSecurityContextHolder.getContext()
                .flatMap(security -> chain.filter(exchange)
                        .contextWrite(ctx -> ctx.put(SecurityContext.class.getName(), security))
                        .then(Mono.just(Boolean.TRUE)))
                .switchIfEmpty(Mono.defer(() -> chain.filter(exchange).then(Mono.just(Boolean.TRUE))))
                .then();
    }
}
