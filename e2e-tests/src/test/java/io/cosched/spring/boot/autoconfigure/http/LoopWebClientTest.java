package io.cosched.spring.boot.autoconfigure.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.verify;

import io.cosched.Coroutines;
import io.cosched.IOManager;
import io.cosched.TestSupport;
import io.cosched.http.client.HttpStub;
import io.cosched.http.client.LoopHttpClient;
import io.cosched.net.TestTls;
import io.cosched.spring.boot.autoconfigure.CoschedAutoConfiguration;
import io.cosched.spring.boot.autoconfigure.web.CoschedReactorNettyAutoConfiguration;
import io.cosched.spring.http.client.reactive.LoopClientHttpConnector;
import java.net.ConnectException;
import java.net.ServerSocket;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.mockito.ArgumentCaptor;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.ssl.SslAutoConfiguration;
import org.springframework.boot.http.client.autoconfigure.HttpClientAutoConfiguration;
import org.springframework.boot.http.client.autoconfigure.reactive.ReactiveHttpClientAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.webclient.autoconfigure.WebClientAutoConfiguration;
import org.springframework.boot.webclient.autoconfigure.WebClientSsl;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.http.client.reactive.ClientHttpConnector;
import org.springframework.http.client.reactive.ReactorClientHttpConnector;
import org.springframework.web.reactive.function.client.WebClient;
import org.springframework.web.reactive.function.client.WebClientRequestException;
import org.springframework.web.reactive.function.client.WebClientResponseException;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * A {@code WebClient} on Spring Boot's connector, called from coroutines: the calls go over cosched's
 * loop client on the coroutine's own loop, and behave as over Reactor Netty (bodies both ways, errors,
 * timeouts, redirects, streaming with demand, {@code zip}); other callers and streamed request bodies go
 * to Reactor Netty.
 */
@Timeout(60)
class LoopWebClientTest {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withPropertyValues("cosched.io.threads=2", "cosched.stall.threshold=0")
            .withConfiguration(AutoConfigurations.of(
                    CoschedAutoConfiguration.class,
                    CoschedReactorNettyAutoConfiguration.class,
                    CoschedWebClientAutoConfiguration.class,
                    SslAutoConfiguration.class,
                    HttpClientAutoConfiguration.class,
                    ReactiveHttpClientAutoConfiguration.class));

    private HttpStub stub;

    @BeforeEach
    void stub() throws Exception {
        stub = new HttpStub();
    }

    @AfterEach
    void stopStub() {
        stub.close();
    }

    @Test
    void aCoroutinesCallGoesOverTheLoopClientAndIsResumedByItsOwnLoopOnly() {
        runner.run(context -> {
            LoopClientHttpConnector connector = (LoopClientHttpConnector) context.getBean(ClientHttpConnector.class);
            assertThat(connector.fallback()).isInstanceOf(ReactorClientHttpConnector.class);
            IOManager io = context.getBean(IOManager.class);
            WebClient web = WebClient.builder()
                    .clientConnector(connector)
                    .baseUrl(stub.uri("/").toString())
                    .build();
            for (int loopIndex = 0; loopIndex < 2; loopIndex++) {
                int home = loopIndex;
                assertThat(io.spawnOn(
                                        home,
                                        () -> web.get()
                                                .uri("/hello")
                                                .retrieve()
                                                .bodyToMono(String.class)
                                                .block())
                                .join())
                        .isEqualTo("hello");
                long remote = io.carrierStats().get(home).remoteWakeups();
                long local = io.carrierStats().get(home).localWakeups();
                String last = io.spawnOn(home, () -> {
                            String body = null;
                            for (int i = 0; i < 30; i++) {
                                body = web.get()
                                        .uri("/hello")
                                        .retrieve()
                                        .bodyToMono(String.class)
                                        .block();
                            }
                            return body;
                        })
                        .join();
                assertThat(last).isEqualTo("hello");
                if (TestSupport.carrierMode()) {
                    assertThat(io.carrierStats().get(home).localWakeups() - local)
                            .as("loop %d", home)
                            .isGreaterThanOrEqualTo(30);
                    assertThat(io.carrierStats().get(home).remoteWakeups() - remote)
                            .as("loop %d", home)
                            .isZero();
                }
            }
            LoopHttpClient client = connector.client();
            assertThat(client.openedConnections())
                    .as("one connection per loop, reused")
                    .isEqualTo(2);
            // a plain thread's call goes to Reactor Netty
            assertThat(web.get()
                            .uri("/hello")
                            .retrieve()
                            .bodyToMono(String.class)
                            .block(Duration.ofSeconds(10)))
                    .isEqualTo("hello");
            assertThat(client.openedConnections()).isEqualTo(2);
        });
    }

    @Test
    void bodiesHeadersCookiesAndStatusesTravelAsOverReactorNetty() {
        runner.run(context -> {
            IOManager io = context.getBean(IOManager.class);
            WebClient web = WebClient.builder()
                    .clientConnector(context.getBean(ClientHttpConnector.class))
                    .baseUrl(stub.uri("/").toString())
                    .build();
            String echoed = io.spawnOn(
                            0,
                            () -> web.post()
                                    .uri("/echo")
                                    .header("X-Test", "t1")
                                    .bodyValue("{\"a\":1}")
                                    .retrieve()
                                    .bodyToMono(String.class)
                                    .block())
                    .join();
            assertThat(echoed).isEqualTo("POST {\"a\":1} x-test=t1 length=7");
            String auth = io.spawnOn(
                            0,
                            () -> web.get()
                                    .uri("/auth")
                                    .headers(h -> h.setBasicAuth("u", "p"))
                                    .retrieve()
                                    .bodyToMono(String.class)
                                    .block())
                    .join();
            assertThat(auth).startsWith("Basic ");
            Integer noContent = io.spawnOn(
                            0,
                            () -> web.get()
                                    .uri("/empty")
                                    .exchangeToMono(
                                            r -> Mono.just(r.statusCode().value()))
                                    .block())
                    .join();
            assertThat(noContent).isEqualTo(204);
            // an error status is Spring's exception, its body read, and the connection carries the next call
            long opened = ((LoopClientHttpConnector) context.getBean(ClientHttpConnector.class))
                    .client()
                    .openedConnections();
            ExecutionException notFound = org.junit.jupiter.api.Assertions.assertThrows(
                    ExecutionException.class,
                    () -> io.spawnOn(
                                    0,
                                    () -> web.get()
                                            .uri("/missing")
                                            .retrieve()
                                            .bodyToMono(String.class)
                                            .block())
                            .join());
            assertThat(notFound.getCause()).isInstanceOf(WebClientResponseException.NotFound.class);
            assertThat(((WebClientResponseException) notFound.getCause()).getResponseBodyAsString())
                    .isEqualTo("no /missing");
            assertThat(io.spawnOn(
                                    0,
                                    () -> web.get()
                                            .uri("/hello")
                                            .retrieve()
                                            .bodyToMono(String.class)
                                            .block())
                            .join())
                    .isEqualTo("hello");
            assertThat(((LoopClientHttpConnector) context.getBean(ClientHttpConnector.class))
                            .client()
                            .openedConnections())
                    .isEqualTo(opened);
            // redirects are followed (Boot's default)
            assertThat(io.spawnOn(
                                    0,
                                    () -> web.get()
                                            .uri("/redirect?code=302&to=/hello")
                                            .retrieve()
                                            .bodyToMono(String.class)
                                            .block())
                            .join())
                    .isEqualTo("hello");
        });
    }

    @Test
    void twoCallsZippedInACoroutineAreInFlightTogether() {
        runner.run(context -> {
            IOManager io = context.getBean(IOManager.class);
            WebClient web = WebClient.builder()
                    .clientConnector(context.getBean(ClientHttpConnector.class))
                    .baseUrl(stub.uri("/").toString())
                    .build();
            String both = io.spawnOn(
                            1,
                            () -> Mono.zip(
                                            web.get()
                                                    .uri("/slow?ms=300")
                                                    .retrieve()
                                                    .bodyToMono(String.class),
                                            web.get()
                                                    .uri("/slow?ms=300")
                                                    .retrieve()
                                                    .bodyToMono(String.class),
                                            (a, b) -> a + b)
                                    .block())
                    .join();
            assertThat(both).isEqualTo("slowslow");
            assertThat(stub.maxInFlight.get())
                    .as("the second call went out before the first was answered")
                    .isEqualTo(2);
        });
    }

    @Test
    void aLargeBodyStreamsAsDemandedAndCancellingItKeepsNothingBroken() {
        runner.run(context -> {
            IOManager io = context.getBean(IOManager.class);
            LoopClientHttpConnector connector = (LoopClientHttpConnector) context.getBean(ClientHttpConnector.class);
            WebClient web = WebClient.builder()
                    .clientConnector(connector)
                    .baseUrl(stub.uri("/").toString())
                    .build();
            long size = 3_000_000;
            long[] checked = io.spawnOn(0, () -> {
                        AtomicLong at = new AtomicLong();
                        AtomicLong wrong = new AtomicLong();
                        web.get()
                                .uri("/stream?size=" + size)
                                .retrieve()
                                .bodyToFlux(DataBuffer.class)
                                .limitRate(2) // a few pieces at a time: the rest waits in the connection, which stops
                                // reading
                                .doOnNext(buf -> {
                                    for (int i = 0; i < buf.readableByteCount(); i++) {
                                        if (buf.getByte(buf.readPosition() + i) != HttpStub.streamByte(at.get() + i)) {
                                            wrong.incrementAndGet();
                                        }
                                    }
                                    at.addAndGet(buf.readableByteCount());
                                    DataBufferUtils.release(buf);
                                })
                                .blockLast();
                        return new long[] {at.get(), wrong.get()};
                    })
                    .join();
            assertThat(checked[0]).isEqualTo(size);
            assertThat(checked[1]).isZero();
            // the first piece only: the rest is read and thrown away on the loop
            Integer first = io.spawnOn(
                            0,
                            () -> web.get()
                                    .uri("/stream?size=" + size)
                                    .retrieve()
                                    .bodyToFlux(DataBuffer.class)
                                    .take(1)
                                    .map(b -> {
                                        int n = b.readableByteCount();
                                        DataBufferUtils.release(b);
                                        return n;
                                    })
                                    .blockFirst())
                    .join();
            assertThat(first).isPositive();
            assertThat(io.spawnOn(
                                    0,
                                    () -> web.get()
                                            .uri("/hello")
                                            .retrieve()
                                            .bodyToMono(String.class)
                                            .block())
                            .join())
                    .isEqualTo("hello");
        });
    }

    @Test
    void aTimeoutCancelsTheCallAndTheConnectionIsKept() {
        runner.run(context -> {
            IOManager io = context.getBean(IOManager.class);
            LoopClientHttpConnector connector = (LoopClientHttpConnector) context.getBean(ClientHttpConnector.class);
            WebClient web = WebClient.builder()
                    .clientConnector(connector)
                    .baseUrl(stub.uri("/").toString())
                    .build();
            ExecutionException timedOut = org.junit.jupiter.api.Assertions.assertThrows(
                    ExecutionException.class,
                    () -> io.spawnOn(
                                    0,
                                    () -> web.get()
                                            .uri("/slow?ms=400")
                                            .retrieve()
                                            .bodyToMono(String.class)
                                            .timeout(Duration.ofMillis(50))
                                            .block())
                            .join());
            assertThat(timedOut.getCause()).hasRootCauseInstanceOf(TimeoutException.class);
            // the abandoned answer arrives, is thrown away, and its connection serves the next call
            String after = io.spawnOn(0, () -> {
                        while (connector.client().idleConnections() == 0) {
                            Coroutines.sleep(Duration.ofMillis(20)); // the loop's timer: no outcome waited for by time
                        }
                        return web.get()
                                .uri("/hello")
                                .retrieve()
                                .bodyToMono(String.class)
                                .block();
                    })
                    .join();
            assertThat(after).isEqualTo("hello");
            assertThat(connector.client().openedConnections()).isEqualTo(1);
        });
    }

    @Test
    void bootsTimeoutsAndFailuresAreTheClientsOwn() throws Exception {
        int closedPort;
        try (ServerSocket s = new ServerSocket(0)) {
            closedPort = s.getLocalPort();
        }
        int refused = closedPort;
        runner.withPropertyValues("spring.http.clients.read-timeout=150ms").run(context -> {
            IOManager io = context.getBean(IOManager.class);
            WebClient web = WebClient.builder()
                    .clientConnector(context.getBean(ClientHttpConnector.class))
                    .build();
            ExecutionException slow = org.junit.jupiter.api.Assertions.assertThrows(
                    ExecutionException.class,
                    () -> io.spawnOn(
                                    0,
                                    () -> web.get()
                                            .uri(stub.uri("/slow?ms=2000"))
                                            .retrieve()
                                            .bodyToMono(String.class)
                                            .block())
                            .join());
            assertThat(slow.getCause())
                    .isInstanceOf(WebClientRequestException.class)
                    .hasRootCauseInstanceOf(SocketTimeoutException.class);
            ExecutionException down = org.junit.jupiter.api.Assertions.assertThrows(
                    ExecutionException.class,
                    () -> io.spawnOn(
                                    0,
                                    () -> web.get()
                                            .uri("http://127.0.0.1:" + refused + "/")
                                            .retrieve()
                                            .bodyToMono(String.class)
                                            .block())
                            .join());
            assertThat(down.getCause())
                    .isInstanceOf(WebClientRequestException.class)
                    .hasCauseInstanceOf(ConnectException.class);
        });
    }

    @Test
    void aStreamedRequestBodyGoesToReactorNetty() {
        runner.run(context -> {
            IOManager io = context.getBean(IOManager.class);
            LoopClientHttpConnector connector = (LoopClientHttpConnector) context.getBean(ClientHttpConnector.class);
            WebClient web = WebClient.builder()
                    .clientConnector(connector)
                    .baseUrl(stub.uri("/").toString())
                    .build();
            String echoed = io.spawnOn(
                            0,
                            () -> web.post()
                                    .uri("/echo")
                                    .header("X-Test", "streamed")
                                    .body(Flux.fromIterable(List.of("a", "b", "c")), String.class)
                                    .retrieve()
                                    .bodyToMono(String.class)
                                    .block())
                    .join();
            assertThat(echoed).startsWith("POST abc x-test=streamed");
            assertThat(connector.client().openedConnections()).isZero();
        });
    }

    @Test
    void closingTheContextClosesTheLoopClientAndItsIdleConnections() {
        LoopClientHttpConnector[] seen = new LoopClientHttpConnector[1];
        runner.run(context -> {
            IOManager io = context.getBean(IOManager.class);
            LoopClientHttpConnector connector = (LoopClientHttpConnector) context.getBean(ClientHttpConnector.class);
            seen[0] = connector;
            WebClient web = WebClient.builder()
                    .clientConnector(connector)
                    .baseUrl(stub.uri("/").toString())
                    .build();
            assertThat(io.spawnOn(
                                    0,
                                    () -> web.get()
                                            .uri("/hello")
                                            .retrieve()
                                            .bodyToMono(String.class)
                                            .block())
                            .join())
                    .isEqualTo("hello");
            assertThat(connector.client().idleConnections()).isEqualTo(1);
        });
        assertThat(seen[0].client().isClosed()).isTrue();
        assertThat(seen[0].client().idleConnections()).isZero();
    }

    @Test
    void bootsWebClientBuilderSendsACoroutinesCallsOverTheLoopClient() {
        runner.withConfiguration(AutoConfigurations.of(WebClientAutoConfiguration.class))
                .run(context -> {
                    IOManager io = context.getBean(IOManager.class);
                    LoopClientHttpConnector connector =
                            (LoopClientHttpConnector) context.getBean(ClientHttpConnector.class);
                    WebClient web = context.getBean(WebClient.Builder.class)
                            .baseUrl(stub.uri("/").toString())
                            .build();
                    long remote = io.carrierStats().get(1).remoteWakeups();
                    String last = io.spawnOn(1, () -> {
                                String body = null;
                                for (int i = 0; i < 10; i++) {
                                    body = web.get()
                                            .uri("/hello")
                                            .retrieve()
                                            .bodyToMono(String.class)
                                            .block();
                                }
                                return body;
                            })
                            .join();
                    assertThat(last).isEqualTo("hello");
                    assertThat(connector.client().openedConnections())
                            .as("Boot's builder has the loop connector")
                            .isEqualTo(1);
                    if (TestSupport.carrierMode()) {
                        assertThat(io.carrierStats().get(1).remoteWakeups() - remote)
                                .isZero();
                    }
                });
    }

    @Test
    void anSslBundleOfBootsSettingsOrOfWebClientSslGoesOverTheLoopClient() throws Exception {
        TestTls tls = TestTls.create();
        try (HttpStub https = new HttpStub(tls.server)) {
            runner.withConfiguration(AutoConfigurations.of(WebClientAutoConfiguration.class))
                    .withPropertyValues(
                            "spring.ssl.bundle.jks.stub.truststore.location=" + tls.keyStore.toUri(),
                            "spring.ssl.bundle.jks.stub.truststore.password=" + TestTls.PASSWORD_TEXT,
                            "spring.ssl.bundle.jks.stub.truststore.type=PKCS12",
                            "spring.http.clients.ssl.bundle=stub")
                    .run(context -> {
                        IOManager io = context.getBean(IOManager.class);
                        LoopClientHttpConnector connector =
                                (LoopClientHttpConnector) context.getBean(ClientHttpConnector.class);
                        WebClient web = context.getBean(WebClient.Builder.class).build();
                        assertThat(io.spawnOn(
                                                0,
                                                () -> web.get()
                                                        .uri(https.uri("/hello"))
                                                        .retrieve()
                                                        .bodyToMono(String.class)
                                                        .block())
                                        .join())
                                .isEqualTo("hello");
                        assertThat(connector.client().openedConnections()).isEqualTo(1);

                        // WebClientSsl gives a builder a connector of its own, made by the same (wrapped) builder
                        WebClient.Builder probe = mock(WebClient.Builder.class);
                        context.getBean(WebClientSsl.class).fromBundle("stub").accept(probe);
                        ArgumentCaptor<ClientHttpConnector> given = ArgumentCaptor.forClass(ClientHttpConnector.class);
                        verify(probe).clientConnector(given.capture());
                        assertThat(given.getValue())
                                .isInstanceOf(LoopClientHttpConnector.class)
                                .isNotSameAs(connector);
                        LoopClientHttpConnector viaSsl = (LoopClientHttpConnector) given.getValue();
                        WebClient own =
                                WebClient.builder().clientConnector(viaSsl).build();
                        assertThat(io.spawnOn(
                                                1,
                                                () -> own.get()
                                                        .uri(https.uri("/hello"))
                                                        .retrieve()
                                                        .bodyToMono(String.class)
                                                        .block())
                                        .join())
                                .isEqualTo("hello");
                        assertThat(viaSsl.client().openedConnections()).isEqualTo(1);
                    });
        }
    }
}
