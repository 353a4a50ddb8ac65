package io.cosched.bench.heavy;

import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.annotation.Order;
import org.springframework.security.core.context.ReactiveSecurityContextHolder;
import org.springframework.security.core.context.SecurityContext;
import org.springframework.web.server.WebFilter;
import reactor.core.publisher.Hooks;

/**
 * The peer's glue, what a team on Spring's virtual threads without cosched ({@code cosched.enabled=false}) must
 * write for method security on blocking code (docs/web.md, "Spring Security"): the authenticated context copied
 * from Reactor's context to the key of Spring Security's thread-local accessor, which Reactor's automatic context
 * propagation then sets on the virtual thread that runs the handler (and with it the trace context).
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnBooleanProperty(name = "cosched.enabled", havingValue = false)
class VirtualThreadsBridge {

    VirtualThreadsBridge() {
        Hooks.enableAutomaticContextPropagation();
    }

    @Bean
    @Order(-99) // after Spring Security's chain (-100), which authenticated the request
    WebFilter securityContextForVirtualThreads() {
        return (exchange, chain) -> ReactiveSecurityContextHolder.getContext()
                .map(SecurityContext.class::cast)
                .materialize()
                .flatMap(signal -> signal.hasValue()
                        ? chain.filter(exchange).contextWrite(c -> c.put(SecurityContext.class.getName(), signal.get()))
                        : chain.filter(exchange));
    }
}
