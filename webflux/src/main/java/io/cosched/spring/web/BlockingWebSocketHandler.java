package io.cosched.spring.web;

/**
 * A WebSocket endpoint in blocking style. {@link #handle} runs once per connection, as a coroutine on the event loop
 * that owns the connection, with the handshake request's context set (the authenticated user in
 * {@code SecurityContextHolder}, MDC, the observation); it receives with a call that parks until a message comes and
 * sends with one that parks while the client is not taking more. The connection closes when it returns (1000, or
 * the status given to {@link BlockingWebSocketSession#close}); a failure closes it with 1011. The client closing or
 * going away ends a wait in {@link BlockingWebSocketSession#receive} and interrupts the coroutine elsewhere (a
 * JDBC call is interrupted once its connection is back in its pool).
 *
 * <p>Make a Spring {@code WebSocketHandler} of it with {@link CoroutineHandlers#webSocket} and map it as any:
 *
 * <pre>{@code
 * @Bean
 * HandlerMapping webSockets(CoroutineHandlers coroutines, PriceRepository prices) {
 *     return new SimpleUrlHandlerMapping(Map.of("/ws/prices", coroutines.webSocket(socket -> {
 *         for (Message m; (m = socket.receive()) != null; ) {
 *             if (m instanceof Message.Text(String symbol)) {
 *                 socket.send(prices.latest(symbol).toJson()); // JDBC: blocks the coroutine, not the loop
 *             }
 *         }
 *     })), -1); // ahead of the annotated handlers' mapping
 * }
 * }</pre>
 */
@FunctionalInterface
public interface BlockingWebSocketHandler {

    /** Talks with one client until the conversation is over; returning closes the connection. */
    void handle(BlockingWebSocketSession session) throws Exception;
}
