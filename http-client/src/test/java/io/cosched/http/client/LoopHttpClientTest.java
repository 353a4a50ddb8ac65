package io.cosched.http.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cosched.IOManager;
import io.netty.handler.codec.http.DefaultHttpHeaders;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpMethod;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The client engine on its own, without Spring: what the Spring adapter relies on. */
@Timeout(60)
class LoopHttpClientTest {

    private static final byte[] NO_BODY = new byte[0];

    private IOManager io;
    private LoopHttpClient http;
    private HttpStub stub;

    @BeforeEach
    void start() throws Exception {
        io = IOManager.builder()
                .name("engine-io")
                .threads(2)
                .stallThreshold(Duration.ZERO)
                .build();
        io.start();
        http = LoopHttpClient.builder(io).readTimeout(Duration.ofSeconds(10)).build();
        stub = new HttpStub();
    }

    @AfterEach
    void stop() {
        stub.close();
        http.close();
        io.stop(Duration.ofSeconds(10));
    }

    private String call(HttpMethod method, URI uri, HttpHeaders headers, byte[] body) throws Exception {
        return io.spawn(() -> {
                    try (LoopHttpResponse r = http.exchange(method, uri, headers, body)) {
                        return r.status() + " " + new String(r.body().readAllBytes(), StandardCharsets.UTF_8);
                    }
                })
                .join();
    }

    @Test
    void aCoroutineSendsHeadersAndBodyAndTheHeadersBecomeTheRequests() throws Exception {
        HttpHeaders headers = new DefaultHttpHeaders().add("X-Test", "1").add("Transfer-Encoding", "chunked");
        assertThat(call(HttpMethod.POST, stub.uri("/echo?status=201"), headers, "hi".getBytes(StandardCharsets.UTF_8)))
                .isEqualTo("201 POST hi x-test=1 length=2");
        // not copied: what the client added and removed shows in them
        assertThat(headers.get("Host")).isEqualTo("localhost:" + stub.port());
        assertThat(headers.get("Content-Length")).isEqualTo("2");
        assertThat(headers.contains("Transfer-Encoding")).isFalse();
        assertThat(http.openedConnections()).isEqualTo(1);
        assertThat(http.idleConnections()).isEqualTo(1); // the whole answer was read: the connection is pooled
    }

    @Test
    void aRedirectKeepsCredentialsOnItsOwnOriginAndDropsThemForAnother() throws Exception {
        try (HttpStub other = new HttpStub()) {
            HttpHeaders auth = new DefaultHttpHeaders().add("Authorization", "Bearer secret");
            assertThat(call(HttpMethod.GET, stub.uri("/redirect?code=302&to=" + encode("/auth")), auth, NO_BODY))
                    .isEqualTo("200 Bearer secret");
            assertThat(call(
                            HttpMethod.GET,
                            stub.uri("/redirect?code=307&to="
                                    + encode(other.uri("/auth").toString())),
                            auth,
                            NO_BODY))
                    .isEqualTo("200 none");
            assertThat(auth.get("Authorization")).isEqualTo("Bearer secret");
        }
    }

    @Test
    void withoutRedirectsTheRedirectAnswerIsTheResponse() throws Exception {
        try (LoopHttpClient noRedirects =
                LoopHttpClient.builder(io).followRedirects(false).build()) {
            URI uri = stub.uri("/redirect?code=302&to=" + encode("/hello"));
            int status = io.spawn(() -> {
                        try (LoopHttpResponse r =
                                noRedirects.exchange(HttpMethod.GET, uri, new DefaultHttpHeaders(), NO_BODY)) {
                            assertThat(r.headers().get("Location")).isEqualTo("/hello");
                            return r.status();
                        }
                    })
                    .join();
            assertThat(status).isEqualTo(302);
        }
    }

    @Test
    void anIOManagerThatWasNeverStartedIsNamedWithItsStateInsteadOfHanging() {
        IOManager idle = IOManager.builder().name("never-started").threads(1).build();
        try (LoopHttpClient c = LoopHttpClient.builder(idle).build()) {
            assertThatThrownBy(() -> c.exchange(HttpMethod.GET, stub.uri("/hello"), new DefaultHttpHeaders(), NO_BODY))
                    .isInstanceOf(IOException.class)
                    .hasMessage(
                            "IOManager 'never-started' is NEW (expected: RUNNING): the connections live on its loops; "
                                    + "start it before the first call");
        } finally {
            idle.stop(Duration.ofSeconds(10));
        }
    }

    @Test
    void aClosedClientTakesNoMoreCalls() {
        http.close();
        assertThat(http.isClosed()).isTrue();
        assertThatThrownBy(() -> http.exchange(HttpMethod.GET, stub.uri("/hello"), new DefaultHttpHeaders(), NO_BODY))
                .isInstanceOf(IOException.class)
                .hasMessage("LoopHttpClient is closed");
    }

    private static String encode(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8);
    }
}
