package io.cosched.spring.http.client;

import static io.cosched.TestSupport.eventually;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cosched.Coroutine;
import io.cosched.CoroutineState;
import io.cosched.IOManager;
import io.cosched.TestSupport;
import io.cosched.http.client.HttpStub;
import io.cosched.http.client.LoopHttpClient;
import io.cosched.http.client.RawHttpServer;
import io.cosched.net.TestTls;
import java.io.InputStream;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLHandshakeException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.http.HttpMethod;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.http.client.ClientHttpResponse;
import org.springframework.web.client.HttpClientErrorException;
import org.springframework.web.client.HttpServerErrorException;
import org.springframework.web.client.ResourceAccessException;
import org.springframework.web.client.RestClient;

@Timeout(60)
class LoopClientHttpRequestFactoryTest {

    private IOManager io;
    private LoopClientHttpRequestFactory factory;
    private RestClient client;
    private HttpStub stub;

    @BeforeEach
    void start() throws Exception {
        io = IOManager.builder()
                .name("client-io")
                .threads(2)
                .stallThreshold(Duration.ZERO)
                .build();
        io.start();
        use(LoopHttpClient.builder(io));
        stub = new HttpStub();
    }

    /** Replaces the factory (and the RestClient over it) with one over a client of these settings. */
    private void use(LoopHttpClient.Builder settings) {
        if (factory != null) {
            factory.close();
        }
        factory = new LoopClientHttpRequestFactory(settings.build());
        client = RestClient.builder().requestFactory(factory).build();
    }

    @AfterEach
    void stop() {
        stub.close();
        factory.close();
        io.stop(Duration.ofSeconds(10));
    }

    @Test
    @Tag("carrier-only") // loop placement and wake-ups are the carriers'
    void aCoroutinesCallsUseAConnectionOfItsOwnLoopAndOnlyThatLoopResumesIt() throws Exception {
        for (int loopIndex = 0; loopIndex < 2; loopIndex++) {
            int home = loopIndex;
            long remote = io.carrierStats().get(home).remoteWakeups();
            long local = io.carrierStats().get(home).localWakeups();
            List<String> bodies = io.spawnOn(home, () -> {
                        List<String> got = new ArrayList<>();
                        for (int i = 0; i < 20; i++) {
                            got.add(client.get()
                                    .uri(stub.uri("/hello"))
                                    .retrieve()
                                    .body(String.class));
                        }
                        return got;
                    })
                    .join();
            assertThat(bodies).hasSize(20).containsOnly("hello");
            assertThat(io.carrierStats().get(home).localWakeups() - local)
                    .as("loop %d", home)
                    .isGreaterThanOrEqualTo(20);
            assertThat(io.carrierStats().get(home).remoteWakeups() - remote)
                    .as("loop %d", home)
                    .isZero();
        }
        // one connection per loop, each reused for its 20 calls
        assertThat(factory.client().openedConnections()).isEqualTo(2);
        assertThat(stub.clientPorts).hasSize(2);
        assertThat(factory.client().idleConnections()).isEqualTo(2);
    }

    @Test
    void outsideACoroutineTheCallerBlocks() {
        assertThat(client.get().uri(stub.uri("/hello")).retrieve().body(String.class))
                .isEqualTo("hello");
    }

    @Test
    void methodsBodiesHeadersAndStatusesArriveAsWithAnyRequestFactory() throws Exception {
        String echoed = io.spawn(() -> client.post()
                        .uri(stub.uri("/echo"))
                        .header("X-Test", "t1")
                        .body("payload")
                        .retrieve()
                        .body(String.class))
                .join();
        assertThat(echoed).isEqualTo("POST payload x-test=t1 length=7");
        assertThat(io.spawn(() -> client.get().uri(stub.uri("/echo")).retrieve().body(String.class))
                        .join())
                .isEqualTo("GET  x-test=null length=null"); // a GET carries no Content-Length
        assertThat(io.spawn(() -> client.delete()
                                .uri(stub.uri("/echo"))
                                .retrieve()
                                .body(String.class))
                        .join())
                .startsWith("DELETE");
        ResponseEntity<String> head = io.spawn(
                        () -> client.head().uri(stub.uri("/hello")).retrieve().toEntity(String.class))
                .join();
        assertThat(head.getStatusCode()).isEqualTo(HttpStatus.OK);
        assertThat(head.getHeaders().getContentType()).hasToString("text/plain;charset=utf-8");
        ResponseEntity<Void> empty = io.spawn(
                        () -> client.get().uri(stub.uri("/empty")).retrieve().toBodilessEntity())
                .join();
        assertThat(empty.getStatusCode()).isEqualTo(HttpStatus.NO_CONTENT);

        assertThatThrownBy(() -> io.spawn(() -> client.get()
                                .uri(stub.uri("/echo?status=404"))
                                .retrieve()
                                .body(String.class))
                        .join())
                .cause()
                .isInstanceOf(HttpClientErrorException.NotFound.class)
                .hasMessageContaining("GET  x-test=null");
        assertThatThrownBy(() -> io.spawn(() -> client.get()
                                .uri(stub.uri("/echo?status=503"))
                                .retrieve()
                                .body(String.class))
                        .join())
                .cause()
                .isInstanceOf(HttpServerErrorException.ServiceUnavailable.class);
        // no connection is left in a call: every one still open is back in its pool
        eventually(
                Duration.ofSeconds(10),
                () -> factory.client().idleConnections() == factory.client().openConnections(),
                () -> factory.client().idleConnections() + " idle of "
                        + factory.client().openConnections() + " open");
        if (TestSupport.carrierMode()) {
            // every exchange above, errors included, left its connection reusable: none was closed, and on
            // its loop the next call came after the last answer was read to its end, so one connection a
            // loop. In fallback mode a caller may close an error answer before its end has arrived, which
            // closes that connection (aResponseClosedUnreadKeepsItsConnectionOnlyWhenTheRestHasArrived)
            assertThat(factory.client().openConnections())
                    .isEqualTo(factory.client().openedConnections());
            assertThat(factory.client().openedConnections()).isLessThanOrEqualTo(2);
        }
    }

    @Test
    void aLargeChunkedBodyArrivesWhole() throws Exception {
        int size = 5 << 20;
        long[] got = io.spawn(() -> client.get()
                        .uri(stub.uri("/stream?size=" + size))
                        .exchange((req, res) -> {
                            long n = 0;
                            long mismatches = 0;
                            byte[] buf = new byte[7000];
                            try (InputStream in = res.getBody()) {
                                int r;
                                while ((r = in.read(buf)) >= 0) {
                                    for (int k = 0; k < r; k++) {
                                        if (buf[k] != HttpStub.streamByte(n + k)) {
                                            mismatches++;
                                        }
                                    }
                                    n += r;
                                }
                            }
                            return new long[] {n, mismatches};
                        }))
                .join();
        assertThat(got[0]).isEqualTo(size);
        assertThat(got[1]).isZero();
    }

    @Test
    void aReadTimeoutIsASocketTimeoutExceptionAndEndsTheConnection() throws Exception {
        use(LoopHttpClient.builder(io).readTimeout(Duration.ofMillis(200)));
        long started = System.nanoTime();
        assertThatThrownBy(() -> io.spawn(() -> client.get()
                                .uri(stub.uri("/slow?ms=3000"))
                                .retrieve()
                                .body(String.class))
                        .join())
                .cause()
                .isInstanceOf(ResourceAccessException.class)
                .hasMessageContaining("Read timed out")
                .rootCause()
                .isInstanceOf(SocketTimeoutException.class);
        assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(2));
        assertThat(factory.client().idleConnections()).isZero();
        // the next call gets a new connection and succeeds
        assertThat(io.spawn(() ->
                                client.get().uri(stub.uri("/hello")).retrieve().body(String.class))
                        .join())
                .isEqualTo("hello");
    }

    @Test
    void aRefusedConnectionIsAConnectException() throws Exception {
        int closed;
        try (ServerSocket probe = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            closed = probe.getLocalPort();
        }
        assertThatThrownBy(() -> io.spawn(() -> client.get()
                                .uri("http://127.0.0.1:" + closed + "/")
                                .retrieve()
                                .body(String.class))
                        .join())
                .cause()
                .isInstanceOf(ResourceAccessException.class)
                .rootCause()
                .isInstanceOf(ConnectException.class);
    }

    @Test
    void aConnectTimeoutIsASocketTimeoutException() throws Exception {
        use(LoopHttpClient.builder(io).connectTimeout(Duration.ofMillis(200)));
        try (ServerSocket full = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            List<Socket> fill = new ArrayList<>();
            try {
                for (int i = 0; i < 2; i++) {
                    Socket s = new Socket();
                    s.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), full.getLocalPort()), 1000);
                    fill.add(s);
                }
                assertThatThrownBy(() -> io.spawn(() -> client.get()
                                        .uri("http://127.0.0.1:" + full.getLocalPort() + "/")
                                        .retrieve()
                                        .body(String.class))
                                .join())
                        .cause()
                        .isInstanceOf(ResourceAccessException.class)
                        .hasMessageContaining("Connect timed out");
            } finally {
                for (Socket s : fill) {
                    s.close();
                }
            }
        }
    }

    @Test
    void aPooledConnectionTheServerDroppedIsReplacedForAnIdempotentRequestOnly() throws Exception {
        // every connection answers its first request and drops the second without an answer
        try (RawHttpServer raw = new RawHttpServer(
                (connection, request, head) -> request == 0 ? RawHttpServer.ok("c" + connection) : null)) {
            URI uri = URI.create("http://127.0.0.1:" + raw.port() + "/");
            List<String> got = io.spawnOn(
                            0,
                            () -> List.of(
                                    client.get().uri(uri).retrieve().body(String.class),
                                    client.get().uri(uri).retrieve().body(String.class)))
                    .join();
            assertThat(got).containsExactly("c0", "c1"); // the second went out again on a new connection
            assertThat(raw.connections()).isEqualTo(2);
            assertThatThrownBy(() -> io.spawnOn(
                                    0,
                                    () -> client.post()
                                            .uri(uri)
                                            .body("x")
                                            .retrieve()
                                            .body(String.class))
                            .join())
                    .cause()
                    .isInstanceOf(ResourceAccessException.class)
                    .hasMessageContaining("Unexpected end of file from server");
        }
    }

    @Test
    void redirectsAreFollowedAsConfigured() throws Exception {
        String to = URLEncoder.encode("/echo", StandardCharsets.UTF_8);
        assertThat(io.spawn(() -> client.post()
                                .uri(stub.uri("/redirect?code=302&to=" + to))
                                .body("b")
                                .retrieve()
                                .body(String.class))
                        .join())
                .isEqualTo("GET  x-test=null length=null");
        assertThat(io.spawn(() -> client.post()
                                .uri(stub.uri("/redirect?code=307&to=" + to))
                                .body("b")
                                .retrieve()
                                .body(String.class))
                        .join())
                .isEqualTo("POST b x-test=null length=1");
        assertThat(io.spawn(() -> client.put()
                                .uri(stub.uri("/redirect?code=303&to=" + to))
                                .body("b")
                                .retrieve()
                                .body(String.class))
                        .join())
                .startsWith("GET ");

        try (HttpStub other = new HttpStub()) {
            // credentials stay with the server they were meant for
            String elsewhere = URLEncoder.encode(other.uri("/auth").toString(), StandardCharsets.UTF_8);
            assertThat(io.spawn(() -> client.get()
                                    .uri(stub.uri("/redirect?code=302&to=" + elsewhere))
                                    .header("Authorization", "Bearer secret")
                                    .retrieve()
                                    .body(String.class))
                            .join())
                    .isEqualTo("none");
            String same = URLEncoder.encode("/auth", StandardCharsets.UTF_8);
            assertThat(io.spawn(() -> client.get()
                                    .uri(stub.uri("/redirect?code=302&to=" + same))
                                    .header("Authorization", "Bearer secret")
                                    .retrieve()
                                    .body(String.class))
                            .join())
                    .isEqualTo("Bearer secret");
        }

        use(LoopHttpClient.builder(io).followRedirects(false));
        ResponseEntity<Void> notFollowed = io.spawn(() -> client.get()
                        .uri(stub.uri("/redirect?code=302&to=" + to))
                        .retrieve()
                        .toBodilessEntity())
                .join();
        assertThat(notFollowed.getStatusCode()).isEqualTo(HttpStatus.FOUND);
        assertThat(notFollowed.getHeaders().getLocation()).hasToString("/echo");
    }

    @Test
    void httpsVerifiesTheServerAndStaysOnTheLoop() throws Exception {
        TestTls tls = TestTls.create();
        try (HttpStub https = new HttpStub(tls.server)) {
            use(LoopHttpClient.builder(io).sslContext(tls.client));
            long[] remote = new long[1];
            String body = io.spawnOn(1, () -> {
                        // not counted: in the handshake and the session ticket the JDK's TLS code here and in the
                        // stub's threads shares locks, and a coroutine waiting on a monitor is resumed by the thread
                        // that releases it (see LoopSocketTest); the second call reuses the connection
                        client.get().uri(https.uri("/hello")).retrieve().body(String.class);
                        long before = io.carrierStats().get(1).remoteWakeups();
                        String second =
                                client.get().uri(https.uri("/hello")).retrieve().body(String.class);
                        remote[0] = io.carrierStats().get(1).remoteWakeups() - before;
                        return second;
                    })
                    .join();
            assertThat(body).isEqualTo("hello");
            assertThat(https.clientPorts).as("one connection, one handshake").hasSize(1);
            assertThat(remote[0]).isZero();

            // the JVM's default trust store does not know the test certificate
            LoopClientHttpRequestFactory defaults =
                    new LoopClientHttpRequestFactory(LoopHttpClient.builder(io).build());
            RestClient untrusting =
                    RestClient.builder().requestFactory(defaults).build();
            assertThatThrownBy(() -> io.spawn(() -> untrusting
                                    .get()
                                    .uri(https.uri("/hello"))
                                    .retrieve()
                                    .body(String.class))
                            .join())
                    .cause()
                    .isInstanceOf(ResourceAccessException.class)
                    .rootCause()
                    .isInstanceOf(java.security.cert.CertPathBuilderException.class);
            assertThatThrownBy(() -> io.spawn(() -> untrusting
                                    .get()
                                    .uri(https.uri("/hello"))
                                    .retrieve()
                                    .body(String.class))
                            .join())
                    .cause()
                    .cause()
                    .isInstanceOf(SSLHandshakeException.class);
            defaults.close();
        }
    }

    @Test
    void aCallerInterruptedWhileWaitingForTheAnswerLeavesAtOnceAndTheConnectionIsKeptForTheNextCall() throws Exception {
        java.util.concurrent.atomic.AtomicReference<Throwable> failure =
                new java.util.concurrent.atomic.AtomicReference<>();
        Coroutine<Long> call = io.spawnOn(0, () -> {
            long started = System.nanoTime();
            try {
                client.get().uri(stub.uri("/slow?ms=400")).retrieve().body(String.class);
            } catch (ResourceAccessException e) {
                failure.set(e.getCause());
            }
            return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
        });
        eventually(
                Duration.ofSeconds(10),
                () -> call.state() == CoroutineState.WAITING && stub.clientPorts.size() == 1,
                call::toString);
        call.interrupt();
        assertThat(call.join()).as("ms until the call gave up").isLessThan(350);
        assertThat(failure.get()).isInstanceOf(java.io.InterruptedIOException.class);
        assertThat(factory.client().idleConnections())
                .as("still draining the answer")
                .isZero();
        // the loop reads the answer when it comes, throws it away and pools the connection
        eventually(
                Duration.ofSeconds(10),
                () -> factory.client().idleConnections() == 1,
                () -> "idle " + factory.client().idleConnections());
        assertThat(io.spawnOn(
                                0,
                                () -> client.get()
                                        .uri(stub.uri("/hello"))
                                        .retrieve()
                                        .body(String.class))
                        .join())
                .isEqualTo("hello");
        assertThat(factory.client().openedConnections())
                .as("the same connection served the next call")
                .isEqualTo(1);
    }

    @Test
    void anInterruptedCallWhoseAnswerDoesNotComeWithinTheIdleTimeoutClosesItsConnection() throws Exception {
        use(LoopHttpClient.builder(io).idleTimeout(Duration.ofMillis(200)));
        Coroutine<String> call = io.spawn(
                () -> client.get().uri(stub.uri("/slow?ms=20000")).retrieve().body(String.class));
        eventually(
                Duration.ofSeconds(10),
                () -> call.state() == CoroutineState.WAITING && stub.clientPorts.size() == 1,
                call::toString);
        call.cancel();
        assertThatThrownBy(call::join).isInstanceOf(java.util.concurrent.CancellationException.class);
        eventually(
                Duration.ofSeconds(10),
                () -> factory.client().openConnections() == 0,
                () -> "still open: " + factory.client().openConnections());
        assertThat(factory.client().idleConnections()).isZero();
    }

    @Test
    void aCallerInterruptedInTheMiddleOfABodyLeavesTheRestToTheLoop() throws Exception {
        int size = 4 << 20;
        Coroutine<Integer> call = io.spawnOn(1, () -> {
            try (ClientHttpResponse r = factory.createRequest(stub.uri("/stream?size=" + size), HttpMethod.GET)
                    .execute()) {
                java.io.InputStream in = r.getBody();
                in.read();
                Thread.currentThread().interrupt(); // as a cancel arriving while the coroutine runs
                byte[] buf = new byte[8192];
                int n = 1;
                try {
                    for (int got; (got = in.read(buf)) >= 0; ) {
                        n += got;
                    }
                } catch (java.io.InterruptedIOException e) {
                    Thread.interrupted();
                    return n;
                }
                return -1;
            }
        });
        assertThat(call.join()).as("bytes read before the interrupt was seen").isBetween(1, size - 1);
        eventually(
                Duration.ofSeconds(10),
                () -> factory.client().idleConnections() == 1,
                () -> "idle " + factory.client().idleConnections());
    }

    @Test
    void aCallOnTheOnlyLoopsOwnThreadFailsInsteadOfHanging() throws Exception {
        try (IOManager single =
                        IOManager.builder().name("single-client-io").threads(1).build();
                LoopClientHttpRequestFactory f = new LoopClientHttpRequestFactory(
                        LoopHttpClient.builder(single).build())) {
            single.start();
            RestClient c = RestClient.builder().requestFactory(f).build();
            var onLoop = single.eventLoop(0)
                    .submit(() -> c.get().uri(stub.uri("/hello")).retrieve().body(String.class));
            assertThatThrownBy(() -> onLoop.get(10, TimeUnit.SECONDS))
                    .cause()
                    .isInstanceOf(ResourceAccessException.class)
                    .hasMessageContaining("event loop thread 'single-client-io-0' outside any coroutine");
        }
    }

    @Test
    void idleConnectionsCloseAfterTheIdleTimeout() throws Exception {
        use(LoopHttpClient.builder(io).idleTimeout(Duration.ofMillis(200)));
        io.spawn(() -> client.get().uri(stub.uri("/hello")).retrieve().body(String.class))
                .join();
        assertThat(factory.client().idleConnections()).isEqualTo(1);
        eventually(
                Duration.ofSeconds(10),
                () -> factory.client().idleConnections() == 0,
                () -> "still idle: " + factory.client().idleConnections());
    }

    @Test
    @Tag("carrier-only") // "before the coroutine resumes" holds when the loop that reads is the coroutine's carrier
    void aResponseClosedUnreadKeepsItsConnectionOnlyWhenTheRestHasArrived() throws Exception {
        // head and body in one write: they arrive together, before the coroutine resumes
        try (RawHttpServer raw = new RawHttpServer((connection, request, head) -> RawHttpServer.ok("unread body"))) {
            URI uri = URI.create("http://127.0.0.1:" + raw.port() + "/");
            io.spawnOn(0, () -> {
                        try (ClientHttpResponse r =
                                factory.createRequest(uri, HttpMethod.GET).execute()) {
                            assertThat(r.getStatusCode().value()).isEqualTo(200);
                        }
                        return null;
                    })
                    .join();
            assertThat(factory.client().idleConnections()).isEqualTo(1);
        }
        io.spawnOn(0, () -> {
                    try (ClientHttpResponse r = factory.createRequest(
                                    stub.uri("/stream?size=" + (8 << 20)), HttpMethod.GET)
                            .execute()) {
                        assertThat(r.getBody().read()).isEqualTo(HttpStub.streamByte(0) & 0xff);
                    }
                    return null;
                })
                .join();
        assertThat(factory.client().idleConnections()).isZero(); // 8 MiB were still on their way: closed
    }

    @Test
    void settingsAreChecked() {
        assertThatThrownBy(() -> LoopHttpClient.builder(io).readTimeout(Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("readTimeout: PT0S (expected: > 0)");
        assertThatThrownBy(() -> LoopHttpClient.builder(io).connectTimeout(Duration.ofSeconds(-1)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("connectTimeout: PT-1S (expected: > 0)");
        assertThatThrownBy(() -> factory.createRequest(URI.create("ftp://x/"), HttpMethod.GET))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("uri: ftp://x/ (expected: an http or https URI)");
    }
}
