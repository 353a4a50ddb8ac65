package io.cosched.bench.http;

import io.cosched.spring.web.BlockingWebSocketSession.Message;
import io.cosched.spring.web.CoroutineHandlers;
import java.util.Map;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.web.reactive.HandlerMapping;
import org.springframework.web.reactive.handler.SimpleUrlHandlerMapping;
import org.springframework.web.reactive.socket.WebSocketHandler;

/**
 * The WebSocket benchmark's endpoints: {@code /ws/echo} answers each text message with itself, {@code /ws/jdbc}
 * with the row its text names (the query of {@code /jdbc}). The reactive variant writes them as reactive
 * {@code WebSocketHandler}s (R2DBC for the row); the others as cosched's blocking handlers (JdbcClient), which run as
 * coroutines on the connection's loop with cosched, and on boundedElastic without it.
 */
@Configuration(proxyBeanMethods = false)
class WebSocketEndpoints {

    @Bean
    HandlerMapping benchWebSockets(
            Environment environment,
            ObjectProvider<CoroutineHandlers> coroutines,
            ObjectProvider<Backends> backends,
            ObjectProvider<DatabaseClient> database) {
        boolean reactive = "reactive".equalsIgnoreCase(environment.getProperty("bench.variant"));
        Map<String, WebSocketHandler> routes = reactive
                ? Map.of("/ws/echo", reactiveEcho(), "/ws/jdbc", reactiveJdbc(database))
                : Map.of(
                        "/ws/echo",
                        coroutines.getObject().webSocket(socket -> {
                            for (Message m; (m = socket.receive()) != null; ) {
                                if (m instanceof Message.Text(String text)) {
                                    socket.send(text);
                                }
                            }
                        }),
                        "/ws/jdbc",
                        coroutines.getObject().webSocket(socket -> {
                            for (Message m; (m = socket.receive()) != null; ) {
                                if (m instanceof Message.Text(String id)) {
                                    socket.send(backends.getObject().readRow(Integer.parseInt(id)));
                                }
                            }
                        }));
        return new SimpleUrlHandlerMapping(routes, -1);
    }

    private static WebSocketHandler reactiveEcho() {
        return session -> session.send(session.receive().map(m -> session.textMessage(m.getPayloadAsText())));
    }

    private static WebSocketHandler reactiveJdbc(ObjectProvider<DatabaseClient> database) {
        return session -> session.send(session.receive()
                .map(m -> Integer.parseInt(m.getPayloadAsText()))
                .concatMap(id -> database.getObject()
                        .sql("SELECT name FROM items WHERE id = :id")
                        .bind("id", Math.floorMod(id, 1000) + 1)
                        .map(row -> row.get(0, String.class))
                        .one())
                .map(session::textMessage));
    }
}
