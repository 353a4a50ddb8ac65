package io.cosched.spring.boot.autoconfigure.web;

import io.cosched.Coroutines;
import io.cosched.spring.web.BlockingWebSocketSession;
import io.cosched.spring.web.BlockingWebSocketSession.Message;
import io.cosched.spring.web.CoroutineHandlers;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.MDC;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.web.reactive.HandlerMapping;
import org.springframework.web.reactive.handler.SimpleUrlHandlerMapping;
import org.springframework.web.reactive.socket.CloseStatus;

/** WebSocket endpoints in blocking style, for the web tests. */
@Configuration(proxyBeanMethods = false)
class WebSocketHandlers {

    /** What the handlers did; reset by each test. */
    static final class Probe {
        static final AtomicLong sent = new AtomicLong();
        static volatile CountDownLatch ended = new CountDownLatch(1);
        static final AtomicReference<Object> endedWith = new AtomicReference<>();

        static void reset() {
            sent.set(0);
            ended = new CountDownLatch(1);
            endedWith.set(null);
        }

        static void end(Object how) {
            endedWith.set(how);
            ended.countDown();
        }
    }

    @Bean
    HandlerMapping webSocketRoutes(CoroutineHandlers coroutines) {
        return new SimpleUrlHandlerMapping(
                Map.of(
                        "/ws/echo", coroutines.webSocket(WebSocketHandlers::echo),
                        "/ws/plain", coroutines.webSocket(WebSocketHandlers::plain),
                        "/ws/push", coroutines.webSocket(WebSocketHandlers::push),
                        "/ws/bye", coroutines.webSocket(WebSocketHandlers::bye),
                        "/ws/ticks", coroutines.webSocket(WebSocketHandlers::ticks)),
                -1);
    }

    /** Each text message back with where it was handled and the handshake's request id. */
    private static void echo(BlockingWebSocketSession socket) throws Exception {
        try {
            for (Message m; (m = socket.receive()) != null; ) {
                if (m instanceof Message.Text(String text)) {
                    Coroutines.sleep(Duration.ofMillis(1)); // blocking per message: parks the coroutine only
                    socket.send("echo:" + text + " on:" + Thread.currentThread() + " id:" + MDC.get("requestId"));
                } else if (m instanceof Message.Binary(byte[] bytes)) {
                    socket.send(bytes);
                }
            }
            Probe.end("receive returned null");
        } catch (Exception e) {
            Probe.end(e);
            throw e;
        }
    }

    /** Each text message back as it came. */
    private static void plain(BlockingWebSocketSession socket) throws Exception {
        for (Message m; (m = socket.receive()) != null; ) {
            if (m instanceof Message.Text(String text)) {
                socket.send(text);
            }
        }
    }

    /** Sends as fast as the client takes; counts what went out and tells how it ended. */
    private static void push(BlockingWebSocketSession socket) throws Exception {
        try {
            String payload = "y".repeat(1_000);
            while (true) {
                socket.send(payload);
                Probe.sent.incrementAndGet();
            }
        } catch (Exception e) {
            Probe.end(e);
            throw e;
        }
    }

    /** Answers the first message, then closes with 4000. */
    private static void bye(BlockingWebSocketSession socket) throws Exception {
        Message m = socket.receive();
        socket.send("bye " + (m instanceof Message.Text(String text) ? text : "?"));
        socket.close(new CloseStatus(4000, "done"));
    }

    /** A message every 50 ms, for ever; tells how it ended. */
    private static void ticks(BlockingWebSocketSession socket) throws Exception {
        try {
            while (true) {
                socket.send("tick");
                Coroutines.sleep(Duration.ofMillis(50));
            }
        } catch (Exception e) {
            Probe.end(e);
            throw e;
        }
    }
}
