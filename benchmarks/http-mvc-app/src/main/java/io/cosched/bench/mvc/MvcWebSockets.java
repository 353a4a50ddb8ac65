package io.cosched.bench.mvc;

import io.cosched.bench.http.Backends;
import org.springframework.context.annotation.Configuration;
import org.springframework.web.socket.TextMessage;
import org.springframework.web.socket.WebSocketSession;
import org.springframework.web.socket.config.annotation.EnableWebSocket;
import org.springframework.web.socket.config.annotation.WebSocketConfigurer;
import org.springframework.web.socket.config.annotation.WebSocketHandlerRegistry;
import org.springframework.web.socket.handler.TextWebSocketHandler;

/**
 * The WebSocket benchmark's endpoints on Spring MVC and Tomcat: {@code /ws/echo} answers each text message with
 * itself, {@code /ws/jdbc} with the row its text names, from Tomcat's threads (virtual ones, with
 * {@code spring.threads.virtual.enabled}), blocking as a servlet handler does.
 */
@Configuration(proxyBeanMethods = false)
@EnableWebSocket
class MvcWebSockets implements WebSocketConfigurer {

    private final Backends backends;

    MvcWebSockets(Backends backends) {
        this.backends = backends;
    }

    @Override
    public void registerWebSocketHandlers(WebSocketHandlerRegistry registry) {
        registry.addHandler(
                new TextWebSocketHandler() {
                    @Override
                    protected void handleTextMessage(WebSocketSession session, TextMessage message) throws Exception {
                        session.sendMessage(new TextMessage(message.getPayload()));
                    }
                },
                "/ws/echo");
        registry.addHandler(
                new TextWebSocketHandler() {
                    @Override
                    protected void handleTextMessage(WebSocketSession session, TextMessage message) throws Exception {
                        session.sendMessage(new TextMessage(backends.readRow(Integer.parseInt(message.getPayload()))));
                    }
                },
                "/ws/jdbc");
    }
}
