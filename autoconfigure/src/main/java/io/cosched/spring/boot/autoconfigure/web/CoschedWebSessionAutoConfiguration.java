package io.cosched.spring.boot.autoconfigure.web;

import io.cosched.spring.boot.autoconfigure.CoschedAutoConfiguration;
import io.cosched.spring.web.session.InlineWebSessionStore;
import java.time.Clock;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.web.server.autoconfigure.ServerProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.web.server.adapter.WebHttpHandlerBuilder;
import org.springframework.web.server.session.DefaultWebSessionManager;
import org.springframework.web.server.session.WebSessionIdResolver;
import org.springframework.web.server.session.WebSessionManager;

/**
 * WebFlux's session manager with cosched's {@link InlineWebSessionStore}, made where Spring Boot would
 * make its own (which backs off): the same {@code server.reactive.session.timeout} and
 * {@code max-sessions}, the same session id resolver (the session cookie settings), but a new session
 * is made on the thread that asks for it instead of two thread hops away.
 * {@code cosched.web.inline-sessions=false} keeps Spring Boot's; Spring Session's session manager (a
 * Redis store, say) and the application's own win over both.
 */
// After Spring Session's reactive auto-configuration: a store of its own (Redis) declares the session manager
// under the same name, and cosched's must see that definition and back off.
@AutoConfiguration(
        after = CoschedAutoConfiguration.class,
        afterName = {
            "org.springframework.boot.webflux.autoconfigure.WebSessionIdResolverAutoConfiguration",
            "org.springframework.boot.session.data.redis.autoconfigure.SessionDataRedisAutoConfiguration"
        },
        beforeName = "org.springframework.boot.webflux.autoconfigure.WebFluxAutoConfiguration")
@ConditionalOnClass({DefaultWebSessionManager.class, ServerProperties.class})
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.REACTIVE)
@ConditionalOnBooleanProperty(name = "cosched.enabled", matchIfMissing = true)
@ConditionalOnBooleanProperty(name = "cosched.web.inline-sessions", matchIfMissing = true)
@EnableConfigurationProperties(ServerProperties.class)
public final class CoschedWebSessionAutoConfiguration {

    @Bean(name = WebHttpHandlerBuilder.WEB_SESSION_MANAGER_BEAN_NAME)
    @ConditionalOnMissingBean(name = WebHttpHandlerBuilder.WEB_SESSION_MANAGER_BEAN_NAME)
    WebSessionManager webSessionManager(ServerProperties server, ObjectProvider<WebSessionIdResolver> idResolver) {
        ServerProperties.Reactive.Session session = server.getReactive().getSession();
        DefaultWebSessionManager manager = new DefaultWebSessionManager();
        manager.setSessionStore(
                new InlineWebSessionStore(session.getMaxSessions(), session.getTimeout(), Clock.systemUTC()));
        idResolver.ifAvailable(manager::setSessionIdResolver);
        return manager;
    }
}
