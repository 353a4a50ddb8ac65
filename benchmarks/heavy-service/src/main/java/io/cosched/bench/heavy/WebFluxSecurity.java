package io.cosched.bench.heavy;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.security.config.Customizer;
import org.springframework.security.config.annotation.method.configuration.EnableMethodSecurity;
import org.springframework.security.config.annotation.web.reactive.EnableWebFluxSecurity;
import org.springframework.security.config.web.server.ServerHttpSecurity;
import org.springframework.security.web.server.SecurityWebFilterChain;

/**
 * The resource server on WebFlux: every {@code /api} request needs a bearer token that Boot's decoder checks against
 * the keys of {@code spring.security.oauth2.resourceserver.jwt.jwk-set-uri}; the service's methods check its scopes.
 */
@Configuration(proxyBeanMethods = false)
@EnableWebFluxSecurity
@EnableMethodSecurity
class WebFluxSecurity {

    @Bean
    SecurityWebFilterChain resourceServer(ServerHttpSecurity http) {
        return http.csrf(ServerHttpSecurity.CsrfSpec::disable)
                .authorizeExchange(a ->
                        a.pathMatchers("/actuator/**").permitAll().anyExchange().authenticated())
                .oauth2ResourceServer(o -> o.jwt(Customizer.withDefaults()))
                .build();
    }
}
