package io.cosched.spring.web;

import java.io.IOException;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.springframework.web.reactive.socket.CloseStatus;
import org.springframework.web.reactive.socket.HandshakeInfo;

/**
 * One WebSocket connection, as its {@link BlockingWebSocketHandler} sees it. Used by the handler's coroutine, or by
 * one thread at a time that it hands the session to; {@link #send} and {@link #receive} may be called from two
 * threads at once (one receiving, one sending).
 */
public interface BlockingWebSocketSession {

    /** The session's id, as Spring's {@code WebSocketSession} gives it. */
    String id();

    /** The handshake: its URI, headers, principal, chosen subprotocol and remote address. */
    HandshakeInfo handshakeInfo();

    /** The session's attributes (those of the handshake's exchange that Spring copies, and the handler's own). */
    Map<String, Object> attributes();

    /**
     * The next message from the client, parking until one comes; null once the client has closed the connection or
     * gone away. Pings are answered by the server and not delivered. Messages the handler does not take are held
     * back: after a few, the server stops reading the connection until it does.
     *
     * @throws StreamClosedException when the session is ending for another reason (the server shuts down)
     * @throws java.io.InterruptedIOException when the coroutine was interrupted while it waited
     */
    @Nullable
    Message receive() throws IOException;

    /**
     * Sends a text message: at once when the client can take more, else parking until it can.
     *
     * @throws StreamClosedException when the connection has closed (reason {@code CLIENT_GONE}), the client took
     *                               nothing for {@code cosched.web.stream.write-timeout}, or the server shuts down
     */
    void send(String text) throws IOException;

    /** Sends a binary message, as {@link #send(String)}. */
    void send(byte[] bytes) throws IOException;

    /**
     * The status the connection closes with once the handler returns, instead of 1000 (normal closure); nothing may
     * be sent after it.
     */
    void close(CloseStatus status);

    /** A message from the client: text or binary, its payload copied off the connection's buffers. */
    sealed interface Message permits Message.Text, Message.Binary {

        /** A text message. */
        record Text(String text) implements Message {}

        /** A binary message; {@code bytes} is the handler's own. */
        record Binary(byte[] bytes) implements Message {}
    }
}
