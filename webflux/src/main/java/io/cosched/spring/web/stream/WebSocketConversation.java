package io.cosched.spring.web.stream;

import io.cosched.Coroutine;
import io.cosched.Coroutines;
import io.cosched.TimerManager;
import io.cosched.spring.web.BlockingWebSocketHandler;
import io.cosched.spring.web.BlockingWebSocketSession;
import io.cosched.spring.web.StreamClosedException;
import io.cosched.spring.web.StreamClosedException.Reason;
import io.cosched.spring.web.context.ContextRestorer;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import org.jspecify.annotations.Nullable;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.web.reactive.socket.CloseStatus;
import org.springframework.web.reactive.socket.HandshakeInfo;
import org.springframework.web.reactive.socket.WebSocketHandler;
import org.springframework.web.reactive.socket.WebSocketMessage;
import org.springframework.web.reactive.socket.WebSocketSession;
import reactor.core.publisher.Mono;
import reactor.util.context.Context;

/**
 * One WebSocket connection served by a {@link BlockingWebSocketHandler}: the client's messages pulled by
 * {@link #receive} (copied off the connection's buffers as they arrive, so that nothing is held past the loop's
 * read), the handler's sent through a {@link ResponseStream} that parks the sender while the client takes nothing,
 * and the handler run by {@link #run} in a coroutine of its own, with the handshake's context.
 *
 * <p>It is the stream request of both directions: the client leaving ends it ({@link Reason#CLIENT_GONE}: a wait
 * in {@link #receive} returns null, the coroutine is interrupted), and so does the server's shutdown, as for an
 * event stream ({@link Reason#SHUTDOWN}: the connection closes with 1001).
 */
final class WebSocketConversation implements BlockingWebSocketSession, StreamRequest {

    /** Messages taken from the connection ahead of the handler; past them the server stops reading it. */
    static final int PREFETCH = 8;

    private final WebSocketSession session;
    private final StreamLimits limits;
    private final @Nullable TimerManager timers;
    private final PullSubscriber<Message> inbound;
    private final ResponseStream<WebSocketMessage> outbound;

    private volatile @Nullable Reason endedBy;
    private volatile @Nullable CloseStatus closeWith;
    private volatile boolean interruptWanted;
    private volatile @Nullable Coroutine<?> coroutine; // the handler's, when it runs as one

    WebSocketConversation(
            WebSocketSession session,
            BlockingWebSocketHandler handler,
            StreamLimits streams,
            @Nullable TimerManager timers) {
        this.session = session;
        // an idle connection is a WebSocket's normal state: no read limit, and no limit in all
        this.limits = new StreamLimits(null, streams.writeTimeout(), null);
        this.timers = timers;
        this.inbound = new PullSubscriber<>(
                session.receive().mapNotNull(WebSocketConversation::copy),
                this,
                PREFETCH,
                m -> {},
                "receiving a WebSocket message");
        this.outbound = new ResponseStream<>(
                handler,
                this,
                stream -> handler.handle(this),
                m -> DataBufferUtils.release(m.getPayload()),
                () -> session.close(CloseStatus.GOING_AWAY).subscribe(), // a cut: shutdown's grace, write-timeout
                null,
                () -> true); // may end after any message: told at once at shutdown
    }

    /**
     * A Spring handler that serves each connection with {@code handler} in a task of {@code starter} (a coroutine on
     * the connection's loop), whose outbound stream is registered with {@code open} while it runs (null: none).
     */
    static WebSocketHandler adapter(
            BlockingWebSocketHandler handler,
            Executor starter,
            StreamLimits limits,
            @Nullable TimerManager timers,
            ContextRestorer restorer,
            @Nullable OpenStreams open) {
        return session -> Mono.deferContextual(view -> {
            WebSocketConversation c = new WebSocketConversation(session, handler, limits, timers);
            if (open != null) {
                open.add(c.outbound);
            }
            try {
                starter.execute(restorer.wrap(Context.of(view), () -> c.run(open)));
            } catch (RejectedExecutionException stopping) {
                if (open != null) {
                    open.remove(c.outbound);
                }
                return session.close(CloseStatus.SERVICE_RESTARTED);
            }
            // the inbound side is cancelled last: Reactor Netty closes a WebSocket whose receiver cancels, at once and
            // without the status the handler chose
            return session.send(c.outbound).then(Mono.defer(c::closeSession)).doFinally(signal -> c.inbound.close());
        });
    }

    /** The handler's task: runs it, then ends the outbound side (the inbound side ends once that has gone out). */
    private void run(@Nullable OpenStreams open) {
        Coroutine<?> self = Coroutines.current().orElse(null);
        coroutine = self;
        if (self != null && interruptWanted) {
            self.interrupt(); // ended before the task began
        }
        try {
            inbound.open(); // the server reads what the client sends from now on, up to the prefetch
            outbound.produce(); // the handler, then the outbound stream's end
        } catch (IOException neverForAConversation) {
            outbound.abandon(); // open fails only for a request that timed out before it streamed: not this one
        } finally {
            if (open != null) {
                open.remove(outbound);
            }
        }
    }

    /** After the handler's messages have gone out: the close it asked for, 1001 at shutdown, or 1000. */
    private Mono<Void> closeSession() {
        Reason reason = endedBy;
        if (reason == Reason.CLIENT_GONE) {
            return Mono.empty();
        }
        CloseStatus status = closeWith;
        if (status == null) {
            status = reason == Reason.SHUTDOWN ? CloseStatus.GOING_AWAY : CloseStatus.NORMAL;
        }
        return session.close(status);
    }

    private static @Nullable Message copy(WebSocketMessage message) {
        DataBuffer payload = message.getPayload();
        return switch (message.getType()) {
            case TEXT -> new Message.Text(payload.toString(StandardCharsets.UTF_8));
            case BINARY -> {
                byte[] bytes = new byte[payload.readableByteCount()];
                payload.read(bytes);
                yield new Message.Binary(bytes);
            }
            case PING, PONG -> null; // answered by the server
        };
    }

    // ---- BlockingWebSocketSession

    @Override
    public String id() {
        return session.getId();
    }

    @Override
    public HandshakeInfo handshakeInfo() {
        return session.getHandshakeInfo();
    }

    @Override
    public Map<String, Object> attributes() {
        return session.getAttributes();
    }

    @Override
    public @Nullable Message receive() throws IOException {
        try {
            return inbound.next();
        } catch (StreamClosedException closed) {
            if (closed.reason() == Reason.CLIENT_GONE) {
                return null; // the connection is over: as at the end of what the client sent
            }
            throw closed;
        }
    }

    @Override
    public void send(String text) throws IOException {
        sendable("send(String)");
        outbound.send(session.textMessage(text));
    }

    @Override
    public void send(byte[] bytes) throws IOException {
        sendable("send(byte[])");
        outbound.send(session.binaryMessage(factory -> factory.wrap(bytes)));
    }

    @Override
    public void close(CloseStatus status) {
        closeWith = Objects.requireNonNull(status, "status");
    }

    private void sendable(String what) {
        CloseStatus status = closeWith;
        if (status != null) {
            throw new IllegalStateException(
                    what + ": the session was closed with " + status + " (expected: nothing sent after close)");
        }
    }

    // ---- StreamRequest: one request for both directions

    @Override
    public boolean beginStream() {
        return true;
    }

    @Override
    public @Nullable Reason endedBy() {
        return endedBy;
    }

    @Override
    public StreamLimits limits() {
        return limits;
    }

    @Override
    public @Nullable TimerManager timers() {
        return timers;
    }

    /** The connection closed, or a write to it failed: the handler's waits end and its coroutine is interrupted. */
    @Override
    public void streamCancelled() {
        end(Reason.CLIENT_GONE);
    }

    @Override
    public void shuttingDown() {
        end(Reason.SHUTDOWN);
    }

    /** The conversation closes its inbound side itself, when the handler has returned. */
    @Override
    public void closeAtEnd(PullSubscriber<?> reader) {}

    private void end(Reason reason) {
        if (endedBy == null) {
            endedBy = reason;
        }
        interrupt();
    }

    /**
     * Interrupts the handler's coroutine (once it has given back a pooled connection it holds). A handler that does
     * not run as a coroutine (cosched's handlers off) is not interrupted: its thread may be a pooled one that goes
     * on to other work; its waits here end all the same.
     */
    private void interrupt() {
        interruptWanted = true;
        Coroutine<?> c = coroutine;
        if (c != null) {
            c.interrupt();
        }
    }

    @Override
    public String toString() {
        return "WebSocket " + session.getId() + " "
                + session.getHandshakeInfo().getUri().getPath();
    }
}
