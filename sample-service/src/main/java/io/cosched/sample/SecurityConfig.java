package io.cosched.sample;

import java.security.KeyFactory;
import java.security.interfaces.RSAPublicKey;
import java.security.spec.X509EncodedKeySpec;
import java.util.Base64;
import java.util.Optional;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.domain.AuditorAware;
import org.springframework.security.config.Customizer;
import org.springframework.security.config.annotation.method.configuration.EnableMethodSecurity;
import org.springframework.security.config.annotation.web.reactive.EnableWebFluxSecurity;
import org.springframework.security.config.web.server.ServerHttpSecurity;
import org.springframework.security.core.Authentication;
import org.springframework.security.core.context.SecurityContextHolder;
import org.springframework.security.core.userdetails.MapReactiveUserDetailsService;
import org.springframework.security.core.userdetails.User;
import org.springframework.security.crypto.factory.PasswordEncoderFactories;
import org.springframework.security.crypto.password.PasswordEncoder;
import org.springframework.security.oauth2.jwt.NimbusReactiveJwtDecoder;
import org.springframework.security.oauth2.jwt.ReactiveJwtDecoder;
import org.springframework.security.oauth2.server.resource.authentication.JwtAuthenticationConverter;
import org.springframework.security.oauth2.server.resource.authentication.JwtGrantedAuthoritiesConverter;
import org.springframework.security.oauth2.server.resource.authentication.ReactiveJwtAuthenticationConverterAdapter;
import org.springframework.security.web.server.SecurityWebFilterChain;

/**
 * HTTP basic against two in-memory users (bcrypt hashes), and JWT bearer tokens when a public key is
 * configured ({@code sample.jwt.public-key}, base64 X.509; roles in the {@code roles} claim). Method
 * security on the service decides the rest.
 */
@Configuration
@EnableWebFluxSecurity
@EnableMethodSecurity
class SecurityConfig {

    @Bean
    SecurityWebFilterChain api(ServerHttpSecurity http, ObjectProvider<ReactiveJwtDecoder> jwt) {
        http.csrf(ServerHttpSecurity.CsrfSpec::disable)
                .authorizeExchange(a -> a.pathMatchers(
                                "/api/public/**", "/actuator/health/**", "/actuator/prometheus", "/actuator/cosched")
                        .permitAll()
                        .pathMatchers("/api/admin/slow-database")
                        .hasRole("ADMIN")
                        .anyExchange()
                        .authenticated())
                .httpBasic(Customizer.withDefaults());
        if (jwt.getIfAvailable() != null) {
            JwtGrantedAuthoritiesConverter roles = new JwtGrantedAuthoritiesConverter();
            roles.setAuthoritiesClaimName("roles");
            roles.setAuthorityPrefix("ROLE_");
            JwtAuthenticationConverter converter = new JwtAuthenticationConverter();
            converter.setJwtGrantedAuthoritiesConverter(roles);
            http.oauth2ResourceServer(o ->
                    o.jwt(j -> j.jwtAuthenticationConverter(new ReactiveJwtAuthenticationConverterAdapter(converter))));
        }
        return http.build();
    }

    /** bcrypt by default; {@code sample.password-encoding=noop} for a benchmark of everything but the hash. */
    @Bean
    PasswordEncoder passwordEncoder(@Value("${sample.password-encoding:bcrypt}") String encoding) {
        if ("noop".equals(encoding)) {
            @SuppressWarnings("deprecation")
            PasswordEncoder noop = org.springframework.security.crypto.password.NoOpPasswordEncoder.getInstance();
            return noop;
        }
        return PasswordEncoderFactories.createDelegatingPasswordEncoder();
    }

    @Bean
    MapReactiveUserDetailsService users(
            PasswordEncoder encoder, @Value("${sample.users.password:secret}") String password) {
        String hash = encoder.encode(password);
        return new MapReactiveUserDetailsService(
                User.withUsername("user").password(hash).roles("USER").build(),
                User.withUsername("admin").password(hash).roles("USER", "ADMIN").build());
    }

    @Bean
    @ConditionalOnProperty("sample.jwt.public-key")
    ReactiveJwtDecoder jwtDecoder(@Value("${sample.jwt.public-key}") String publicKey) throws Exception {
        RSAPublicKey key = (RSAPublicKey) KeyFactory.getInstance("RSA")
                .generatePublic(new X509EncodedKeySpec(Base64.getDecoder().decode(publicKey)));
        return NimbusReactiveJwtDecoder.withPublicKey(key).build();
    }

    /** Spring Data's auditing reads who is changing an entity from SecurityContextHolder, as in Spring MVC. */
    @Bean
    AuditorAware<String> auditor() {
        return () -> Optional.ofNullable(SecurityContextHolder.getContext().getAuthentication())
                .filter(Authentication::isAuthenticated)
                .map(Authentication::getName);
    }
}
