package io.cosched.spring.boot.autoconfigure.web;

import io.cosched.IOManager;
import io.cosched.netty.LoopProgressHandler;
import io.cosched.spring.boot.autoconfigure.CoschedAutoConfiguration;
import io.cosched.spring.boot.autoconfigure.http.CoschedWebClientProperties;
import io.cosched.spring.web.netty.GlobalLoops;
import io.cosched.spring.web.netty.IOManagerLoopResources;
import io.cosched.spring.web.netty.LoopConnectionProvider;
import io.cosched.spring.web.netty.ServerConnections;
import io.cosched.spring.web.netty.WebSocketUpgradeGuard;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.reactor.netty.NettyServerCustomizer;
import org.springframework.boot.web.server.context.WebServerInitializedEvent;
import org.springframework.context.ApplicationListener;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.client.ReactorResourceFactory;
import reactor.netty.resources.LoopResources;

/**
 * Puts Reactor Netty (the WebFlux server, and Reactor Netty clients) on the IOManager's event
 * loops, so that a request's coroutine runs on the loop that read the request; clients made from the
 * factory (Spring Boot's {@code WebClient.Builder}) keep a connection pool per loop, so that a
 * coroutine blocking on one is resumed by its own loop ({@code cosched.web-client.enabled}). Spring Boot's own
 * {@code ReactorResourceFactory} backs off when one exists, so this one must come first: before
 * both auto-configurations that import Boot's. (A {@code NettyServerCustomizer} calling
 * {@code runOn} would not do: the server applies the factory's loops after the customizers.)
 */
@AutoConfiguration(
        after = CoschedAutoConfiguration.class,
        beforeName = {
            "org.springframework.boot.reactor.netty.autoconfigure.NettyReactiveWebServerAutoConfiguration",
            "org.springframework.boot.http.client.autoconfigure.reactive.ReactiveHttpClientAutoConfiguration"
        })
@ConditionalOnClass({ReactorResourceFactory.class, LoopResources.class})
@ConditionalOnBean(IOManager.class)
@ConditionalOnBooleanProperty(name = "cosched.enabled", matchIfMissing = true)
@EnableConfigurationProperties(CoschedWebClientProperties.class)
public final class CoschedReactorNettyAutoConfiguration {

    /** Spring's default for its one connection pool, kept for each of ours: connections per host. */
    static final int MAX_CONNECTIONS = 500;

    @Bean
    @ConditionalOnMissingBean
    ReactorResourceFactory reactorResourceFactory(IOManager io, CoschedWebClientProperties webClient) {
        ReactorResourceFactory factory = new ReactorResourceFactory();
        factory.setUseGlobalResources(false);
        factory.setLoopResources(new IOManagerLoopResources(io));
        if (webClient.isEnabled()) {
            factory.setConnectionProviderSupplier(() -> LoopConnectionProvider.create(io, "webflux", MAX_CONNECTIONS));
        }
        return factory;
    }

    /**
     * Reactor Netty clients not made from the factory ({@code WebClient.create()}, Spring Security's JWK set client)
     * on the IOManager's loops too: no {@code reactor-http-*} thread, and a request waiting for such a call goes on
     * from its own loop. Given back to Reactor Netty when the context closes.
     */
    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean
    @ConditionalOnBooleanProperty(name = "cosched.web-client.global-loops", matchIfMissing = true)
    GlobalLoops coschedGlobalLoops(IOManager io) {
        return GlobalLoops.install(io);
    }

    /**
     * Counts the server's socket reads as the loops' progress for the stall watchdog (a loop that
     * reads a long batch of short requests is busy, not stuck), and its connections: accepted, open,
     * and waiting in the listen queue.
     */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(NettyServerCustomizer.class)
    static final class ServerProgress {

        @Bean
        @ConditionalOnMissingBean
        ServerConnections coschedServerConnections() {
            return new ServerConnections();
        }

        @Bean
        NettyServerCustomizer coschedLoopProgress(ServerConnections connections) {
            return server -> server.doOnChannelInit((observer, channel, remote) -> {
                channel.pipeline().addFirst("cosched.progress", LoopProgressHandler.INSTANCE);
                connections.accepted(channel);
            });
        }

        /**
         * Keeps the WebSocket frames a client sends together with its upgrade request, which the HTTP decoder would
         * otherwise take for a malformed request and drop before the handshake is done.
         */
        @Bean
        NettyServerCustomizer coschedWebSocketUpgrade() {
            return server ->
                    server.doOnChannelInit((observer, channel, remote) -> WebSocketUpgradeGuard.install(channel));
        }

        /** The main server's port (not a management server's): what its listen queue is found by. */
        @Bean
        ApplicationListener<WebServerInitializedEvent> coschedServerPort(ServerConnections connections) {
            return event -> {
                if (event.getApplicationContext().getServerNamespace() == null) {
                    connections.listening(event.getWebServer().getPort());
                }
            };
        }
    }
}
