package io.cosched.http.client;

import static org.assertj.core.api.Assertions.assertThat;

import io.cosched.Coroutines;
import io.cosched.IOManager;
import io.cosched.net.TestTls;
import io.netty.buffer.ByteBuf;
import io.netty.handler.codec.http.DefaultHttpHeaders;
import io.netty.handler.codec.http.HttpMethod;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.ConnectException;
import java.net.ServerSocket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import javax.net.ssl.SSLHandshakeException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The asynchronous exchange on its own: answers told on the connection's loop, bodies as demanded, failures, cancels. */
@Timeout(60)
class LoopExchangeTest {

    private static final byte[] NO_BODY = new byte[0];

    private IOManager io;
    private HttpStub stub;

    @BeforeEach
    void start() throws Exception {
        io = IOManager.builder()
                .name("exchange-io")
                .threads(2)
                .stallThreshold(Duration.ZERO)
                .build();
        io.start();
        stub = new HttpStub();
    }

    @AfterEach
    void stop() {
        stub.close();
        io.stop(Duration.ofSeconds(10));
    }

    /** Records what the exchange tells, asking for one piece at a time, and where it was told. */
    private final class Recorder implements ExchangeHandler {
        final CompletableFuture<String> done = new CompletableFuture<>();
        final ByteArrayOutputStream body = new ByteArrayOutputStream();
        final AtomicInteger offLoop = new AtomicInteger();
        final AtomicInteger pieces = new AtomicInteger();
        volatile int status;
        private LoopExchange exchange;

        private void where(LoopExchange e) {
            if (!io.eventLoop(e.loopIndex()).inEventLoop()) {
                offLoop.incrementAndGet();
            }
        }

        @Override
        public void onResponse(LoopExchange e) {
            exchange = e;
            where(e);
            status = e.status();
            e.demand(1);
        }

        @Override
        public void onContent(ByteBuf content) {
            where(exchange);
            pieces.incrementAndGet();
            byte[] bytes = new byte[content.readableBytes()];
            content.readBytes(bytes);
            content.release();
            body.writeBytes(bytes);
            exchange.demand(1);
        }

        @Override
        public void onEnd() {
            where(exchange);
            done.complete(status + " " + body.size());
        }

        @Override
        public void onError(IOException error) {
            done.completeExceptionally(error);
        }
    }

    @Test
    void aThreadsExchangeIsToldOnItsLoopAndTheBodyComesAsDemanded() throws Exception {
        LoopHttpClient http = LoopHttpClient.builder(io).build();
        int size = 500_000;
        Recorder r = new Recorder();
        http.start(1, HttpMethod.GET, stub.uri("/stream?size=" + size), new DefaultHttpHeaders(), NO_BODY, r);
        assertThat(r.done.get(20, TimeUnit.SECONDS)).isEqualTo("200 " + size);
        byte[] got = r.body.toByteArray();
        for (int i = 0; i < size; i++) {
            if (got[i] != HttpStub.streamByte(i)) {
                throw new AssertionError("byte " + i);
            }
        }
        assertThat(r.offLoop.get()).as("calls off the connection's loop").isZero();
        assertThat(r.pieces.get()).isGreaterThan(1);
        assertThat(http.idleConnections())
                .as("the whole answer read: the connection is pooled")
                .isEqualTo(1);
        // the next exchange on that loop takes it again
        Recorder again = new Recorder();
        http.start(1, HttpMethod.GET, stub.uri("/hello"), new DefaultHttpHeaders(), NO_BODY, again);
        assertThat(again.done.get(20, TimeUnit.SECONDS)).isEqualTo("200 5");
        assertThat(http.openedConnections()).isEqualTo(1);
    }

    @Test
    void aCoroutineStartsOnItsOwnLoopAndRedirectsAreFollowed() throws Exception {
        LoopHttpClient http = LoopHttpClient.builder(io).build();
        Recorder r = new Recorder();
        int loopIndex = io.spawnOn(
                        1,
                        () -> http.start(
                                        HttpMethod.GET,
                                        stub.uri("/redirect?code=302&to=/hello"),
                                        new DefaultHttpHeaders(),
                                        NO_BODY,
                                        r)
                                .loopIndex())
                .join();
        assertThat(loopIndex).isEqualTo(1);
        assertThat(r.done.get(20, TimeUnit.SECONDS)).isEqualTo("200 5");
        assertThat(new String(r.body.toByteArray(), StandardCharsets.UTF_8)).isEqualTo("hello");
    }

    @Test
    void failuresAreTheBlockingClientsOwn() throws Exception {
        int closedPort;
        try (ServerSocket s = new ServerSocket(0)) {
            closedPort = s.getLocalPort();
        }
        LoopHttpClient http =
                LoopHttpClient.builder(io).readTimeout(Duration.ofMillis(100)).build();
        Recorder refused = new Recorder();
        http.start(
                0,
                HttpMethod.GET,
                URI.create("http://127.0.0.1:" + closedPort + "/"),
                new DefaultHttpHeaders(),
                NO_BODY,
                refused);
        assertThat(refused.done)
                .failsWithin(Duration.ofSeconds(20))
                .withThrowableOfType(java.util.concurrent.ExecutionException.class)
                .withCauseInstanceOf(ConnectException.class);
        Recorder slow = new Recorder();
        http.start(0, HttpMethod.GET, stub.uri("/slow?ms=3000"), new DefaultHttpHeaders(), NO_BODY, slow);
        assertThat(slow.done)
                .failsWithin(Duration.ofSeconds(20))
                .withThrowableOfType(java.util.concurrent.ExecutionException.class)
                .withCauseInstanceOf(SocketTimeoutException.class)
                .withMessageContaining("Read timed out");
        assertThat(http.openConnections())
                .as("the timed-out connection is closed")
                .isZero();
    }

    @Test
    void aCancelledExchangeHearsNothingMoreAndItsConnectionIsKept() throws Exception {
        LoopHttpClient http = LoopHttpClient.builder(io).build();
        Recorder r = new Recorder();
        LoopExchange e = http.start(0, HttpMethod.GET, stub.uri("/slow?ms=200"), new DefaultHttpHeaders(), NO_BODY, r);
        e.cancel();
        // the answer arrives, is read to its end on the loop, and the connection goes back to the pool
        io.spawnOn(0, () -> {
                    while (http.idleConnections() == 0) {
                        Coroutines.sleep(Duration.ofMillis(20));
                    }
                    return null;
                })
                .join();
        assertThat(r.done).isNotDone();
        assertThat(http.openedConnections()).isEqualTo(1);
        Recorder next = new Recorder();
        http.start(0, HttpMethod.GET, stub.uri("/hello"), new DefaultHttpHeaders(), NO_BODY, next);
        assertThat(next.done.get(20, TimeUnit.SECONDS)).isEqualTo("200 5");
        assertThat(http.openedConnections()).isEqualTo(1);
    }

    @Test
    void httpsVerifiesTheServerAndIsToldOnTheLoop() throws Exception {
        TestTls tls = TestTls.create();
        try (HttpStub https = new HttpStub(tls.server)) {
            LoopHttpClient http =
                    LoopHttpClient.builder(io).sslContext(tls.client).build();
            for (int i = 0; i < 2; i++) {
                Recorder r = new Recorder();
                http.start(1, HttpMethod.GET, https.uri("/hello"), new DefaultHttpHeaders(), NO_BODY, r);
                assertThat(r.done.get(20, TimeUnit.SECONDS)).isEqualTo("200 5");
                assertThat(r.offLoop.get()).isZero();
            }
            assertThat(http.openedConnections())
                    .as("the TLS connection is reused")
                    .isEqualTo(1);

            // the JVM's default trust store does not know the test certificate
            LoopHttpClient untrusting = LoopHttpClient.builder(io).build();
            Recorder refused = new Recorder();
            untrusting.start(0, HttpMethod.GET, https.uri("/hello"), new DefaultHttpHeaders(), NO_BODY, refused);
            assertThat(refused.done)
                    .failsWithin(Duration.ofSeconds(20))
                    .withThrowableOfType(ExecutionException.class)
                    .withCauseInstanceOf(SSLHandshakeException.class);
            assertThat(untrusting.openConnections()).isZero();
        }
    }

    @Test
    void aPooledConnectionTheServerDroppedIsReplacedForAnIdempotentRequestOnly() throws Exception {
        // every connection answers its first request and drops the second without an answer
        try (RawHttpServer raw = new RawHttpServer(
                (connection, request, head) -> request == 0 ? RawHttpServer.ok("c" + connection) : null)) {
            LoopHttpClient http = LoopHttpClient.builder(io).build();
            URI uri = URI.create("http://127.0.0.1:" + raw.port() + "/");
            Recorder first = new Recorder();
            http.start(0, HttpMethod.GET, uri, new DefaultHttpHeaders(), NO_BODY, first);
            assertThat(first.done.get(20, TimeUnit.SECONDS)).isEqualTo("200 2");
            assertThat(first.body.toString(StandardCharsets.UTF_8)).isEqualTo("c0");
            Recorder again = new Recorder();
            http.start(0, HttpMethod.GET, uri, new DefaultHttpHeaders(), NO_BODY, again);
            assertThat(again.done.get(20, TimeUnit.SECONDS)).isEqualTo("200 2");
            assertThat(again.body.toString(StandardCharsets.UTF_8))
                    .as("sent again on a new connection")
                    .isEqualTo("c1");
            assertThat(raw.connections()).isEqualTo(2);
            Recorder post = new Recorder();
            http.start(0, HttpMethod.POST, uri, new DefaultHttpHeaders(), "x".getBytes(StandardCharsets.UTF_8), post);
            assertThat(post.done)
                    .failsWithin(Duration.ofSeconds(20))
                    .withThrowableOfType(ExecutionException.class)
                    .withCauseInstanceOf(SocketException.class)
                    .withMessageContaining("Unexpected end of file from server");
            assertThat(raw.connections()).as("a POST is not sent twice").isEqualTo(2);
        }
    }

    @Test
    void aBodyCutShortAndAnAnswerThatIsNotHttpFailAndCloseTheirConnections() throws Exception {
        try (RawHttpServer raw = new RawHttpServer((connection, request, head) -> head.startsWith("GET /short")
                ? RawHttpServer.thenClose("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly this")
                : "SMTP ready\r\n\r\n")) {
            LoopHttpClient http = LoopHttpClient.builder(io).build();
            Recorder cut = new Recorder();
            http.start(
                    1,
                    HttpMethod.GET,
                    URI.create("http://127.0.0.1:" + raw.port() + "/short"),
                    new DefaultHttpHeaders(),
                    NO_BODY,
                    cut);
            assertThat(cut.done)
                    .failsWithin(Duration.ofSeconds(20))
                    .withThrowableOfType(ExecutionException.class)
                    .withCauseInstanceOf(IOException.class)
                    .withMessageContaining("Premature EOF");
            assertThat(cut.status)
                    .as("the head was told before the body failed")
                    .isEqualTo(200);
            Recorder garbage = new Recorder();
            http.start(
                    1,
                    HttpMethod.GET,
                    URI.create("http://127.0.0.1:" + raw.port() + "/other"),
                    new DefaultHttpHeaders(),
                    NO_BODY,
                    garbage);
            assertThat(garbage.done)
                    .failsWithin(Duration.ofSeconds(20))
                    .withThrowableOfType(ExecutionException.class)
                    .withCauseInstanceOf(IOException.class)
                    .withMessageContaining("invalid HTTP response");
            io.spawnOn(1, () -> {
                        while (http.openConnections() > 0) {
                            Coroutines.sleep(
                                    Duration.ofMillis(10)); // the close is the loop's: its timer, no outcome slept for
                        }
                        return null;
                    })
                    .join();
            assertThat(http.idleConnections()).isZero();
        }
    }
}
