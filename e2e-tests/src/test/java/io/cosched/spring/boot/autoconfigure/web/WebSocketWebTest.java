package io.cosched.spring.boot.autoconfigure.web;

import static org.assertj.core.api.Assertions.assertThat;

import io.cosched.spring.boot.autoconfigure.web.WebSocketHandlers.Probe;
import io.cosched.spring.web.StreamClosedException;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.WebSocket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * WebSocket endpoints in blocking style ({@code CoroutineHandlers.webSocket}): each connection's handler runs as a
 * coroutine on the connection's loop with the handshake's context, receives with a call that parks, sends with one
 * that parks under backpressure, ends with its socket, and loses none of the messages a client sends together with
 * its handshake, also when the handshake reached the handler off its loop.
 */
@Tag("both-modes")
@Timeout(60)
class WebSocketWebTest {

    @RegisterExtension
    static final RunningApp app = new RunningApp();

    @AfterEach
    void nothingLeftRunning() throws Exception {
        app.awaitIdle();
    }

    @Test
    void aHandlerRunsAsACoroutineOnTheConnectionsLoopWithTheHandshakesContext() throws Exception {
        Client client = open("/ws/echo", true, "X-Request-Id", "req-7");
        client.socket.sendText("hello", true).get(10, TimeUnit.SECONDS);
        String answer = client.next();
        assertThat(answer).startsWith("echo:hello on:VirtualThread").endsWith(" id:req-7");
        if (app.bean(io.cosched.IOManager.class).isCarrierMode()) {
            assertThat(answer).contains("@test-io-");
        }
        client.socket.sendBinary(ByteBuffer.wrap(new byte[] {1, 2, 3}), true).get(10, TimeUnit.SECONDS);
        assertThat(client.binary.poll(10, TimeUnit.SECONDS)).containsExactly(1, 2, 3);
        client.socket.sendClose(WebSocket.NORMAL_CLOSURE, "done").get(10, TimeUnit.SECONDS);
        assertThat(Probe.ended.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(Probe.endedWith.get()).as("the client closing ends receive").isEqualTo("receive returned null");
        assertThat(client.closedWith.get(10, TimeUnit.SECONDS)).isEqualTo(WebSocket.NORMAL_CLOSURE);
    }

    @Test
    void manyConversationsWithBlockingWorkPerMessageAllAnswer() throws Exception {
        List<Client> clients = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
            clients.add(open("/ws/echo", true));
        }
        for (int round = 0; round < 5; round++) {
            for (Client c : clients) {
                c.socket.sendText("m" + round, true);
            }
            for (Client c : clients) {
                assertThat(c.next()).startsWith("echo:m" + round + " ");
            }
        }
        for (Client c : clients) {
            c.socket.sendClose(WebSocket.NORMAL_CLOSURE, "").get(10, TimeUnit.SECONDS);
        }
    }

    @Test
    void aClientThatReadsNothingParksTheSenderAndItsLeavingEndsIt() throws Exception {
        Client client = open("/ws/push", false);
        Await.until(() -> Probe.sent.get() > 0, () -> "nothing sent");
        long sent = Await.stableAfter(Probe.sent);
        // socket buffers and the few messages Reactor Netty queues: 5,000 messages of 1 KB would be 5 MB
        assertThat(sent).as("messages sent to a client that reads nothing").isLessThan(5_000);
        assertThat(Probe.ended.getCount()).as("the sender is parked, not ended").isOne();
        client.socket.abort();
        assertThat(Probe.ended.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(StreamingHandlers.closedBecause(
                        (Throwable) Probe.endedWith.get(), StreamClosedException.Reason.CLIENT_GONE))
                .as(String.valueOf(Probe.endedWith.get()))
                .isTrue();
    }

    @Test
    void aHandlerThatClosesWithAStatusClosesTheConnectionWithIt() throws Exception {
        Client client = open("/ws/bye", true);
        client.socket.sendText("now", true);
        assertThat(client.next()).isEqualTo("bye now");
        assertThat(client.closedWith.get(10, TimeUnit.SECONDS)).isEqualTo(4000);
    }

    @Test
    void messagesSentTogetherWithTheHandshakeAreAllAnsweredAlsoWhenTheHandshakeLeftTheLoop() throws Exception {
        // 20 runs: on the loop, and off it as after Spring Security's password check (X-Hop: elastic)
        for (String hop : List.of("none", "elastic")) {
            for (int run = 0; run < 10; run++) {
                try (Socket s = new Socket(InetAddress.getLoopbackAddress(), WebTestApp.port(app.context()))) {
                    s.setSoTimeout(10_000);
                    ByteArrayOutputStream out = new ByteArrayOutputStream();
                    out.writeBytes(("GET /ws/plain HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\n"
                                    + "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                                    + "Sec-WebSocket-Version: 13\r\nX-Hop: " + hop + "\r\n\r\n")
                            .getBytes(StandardCharsets.US_ASCII));
                    for (int i = 0; i < 20; i++) {
                        out.writeBytes(maskedText("early " + i));
                    }
                    s.getOutputStream().write(out.toByteArray()); // one write: the frames come with the handshake
                    DataInputStream in = new DataInputStream(s.getInputStream());
                    assertThat(readHead(in)).as(hop).startsWith("HTTP/1.1 101");
                    for (int i = 0; i < 20; i++) {
                        assertThat(readText(in)).as(hop + ", run " + run).isEqualTo("early " + i);
                    }
                }
            }
        }
    }

    // ---- helpers

    private static Client open(String path, boolean reading, String... headers) throws Exception {
        return Client.open(WebTestApp.port(app.context()), path, reading, headers);
    }

    /** A client of the JDK's: text and binary messages in queues, the close status in a future. */
    static final class Client implements WebSocket.Listener {
        final BlockingQueue<String> texts = new LinkedBlockingQueue<>();
        final BlockingQueue<byte[]> binary = new LinkedBlockingQueue<>();
        final CompletableFuture<Integer> closedWith = new CompletableFuture<>();
        private final boolean reading;
        private final StringBuilder text = new StringBuilder();
        private final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        WebSocket socket;

        private Client(boolean reading) {
            this.reading = reading;
        }

        /** Connects to {@code path}; a client not {@code reading} takes no message, so the server's sends park. */
        static Client open(int port, String path, boolean reading, String... headers) throws Exception {
            Client c = new Client(reading);
            WebSocket.Builder b = HttpClient.newHttpClient().newWebSocketBuilder();
            for (int i = 0; i < headers.length; i += 2) {
                b.header(headers[i], headers[i + 1]);
            }
            c.socket =
                    b.buildAsync(URI.create("ws://127.0.0.1:" + port + path), c).get(10, TimeUnit.SECONDS);
            return c;
        }

        String next() throws InterruptedException {
            String t = texts.poll(10, TimeUnit.SECONDS);
            assertThat(t).as("a message within 10 s").isNotNull();
            return t;
        }

        @Override
        public void onOpen(WebSocket webSocket) {
            if (reading) {
                webSocket.request(1);
            }
        }

        @Override
        public CompletionStage<?> onText(WebSocket webSocket, CharSequence data, boolean last) {
            text.append(data);
            if (last) {
                texts.add(text.toString());
                text.setLength(0);
            }
            webSocket.request(1);
            return null;
        }

        @Override
        public CompletionStage<?> onBinary(WebSocket webSocket, ByteBuffer data, boolean last) {
            byte[] b = new byte[data.remaining()];
            data.get(b);
            bytes.writeBytes(b);
            if (last) {
                binary.add(bytes.toByteArray());
                bytes.reset();
            }
            webSocket.request(1);
            return null;
        }

        @Override
        public CompletionStage<?> onClose(WebSocket webSocket, int statusCode, String reason) {
            closedWith.complete(statusCode);
            return null;
        }

        @Override
        public void onError(WebSocket webSocket, Throwable error) {
            closedWith.completeExceptionally(error);
        }
    }

    /** A client's text frame: final, masked (RFC 6455 5.3), payload under 126 bytes. */
    private static byte[] maskedText(String text) {
        byte[] payload = text.getBytes(StandardCharsets.UTF_8);
        byte[] mask = {0x11, 0x22, 0x33, 0x44};
        ByteArrayOutputStream frame = new ByteArrayOutputStream();
        frame.write(0x81);
        frame.write(0x80 | payload.length);
        frame.writeBytes(mask);
        for (int i = 0; i < payload.length; i++) {
            frame.write(payload[i] ^ mask[i % 4]);
        }
        return frame.toByteArray();
    }

    private static String readHead(InputStream in) throws IOException {
        StringBuilder head = new StringBuilder();
        while (!head.toString().endsWith("\r\n\r\n")) {
            int c = in.read();
            if (c < 0) {
                throw new IOException("the connection closed in the handshake's answer: " + head);
            }
            head.append((char) c);
        }
        return head.toString();
    }

    /** A server's text frame: final, unmasked. */
    private static String readText(DataInputStream in) throws IOException {
        int first = in.readUnsignedByte();
        assertThat(first).as("a final text frame").isEqualTo(0x81);
        int length = in.readUnsignedByte();
        if (length == 126) {
            length = in.readUnsignedShort();
        }
        byte[] payload = new byte[length];
        in.readFully(payload);
        return new String(payload, StandardCharsets.UTF_8);
    }
}
