package io.cosched.spring.boot.autoconfigure.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.sun.net.httpserver.HttpServer;
import io.cosched.IOManager;
import io.cosched.spring.boot.autoconfigure.CoschedAutoConfiguration;
import io.cosched.spring.http.client.LoopClientHttpRequestFactory;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.Executors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.ssl.SslAutoConfiguration;
import org.springframework.boot.http.client.ClientHttpRequestFactoryBuilder;
import org.springframework.boot.http.client.HttpClientSettings;
import org.springframework.boot.http.client.autoconfigure.HttpClientAutoConfiguration;
import org.springframework.boot.restclient.RestTemplateBuilder;
import org.springframework.boot.restclient.autoconfigure.RestClientAutoConfiguration;
import org.springframework.boot.restclient.autoconfigure.RestTemplateAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.HttpStatus;
import org.springframework.http.client.SimpleClientHttpRequestFactory;
import org.springframework.web.client.ResourceAccessException;
import org.springframework.web.client.RestClient;

@Timeout(60)
class CoschedHttpClientAutoConfigurationTest {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withPropertyValues("cosched.io.threads=2", "cosched.stall.threshold=0")
            .withConfiguration(AutoConfigurations.of(
                    CoschedAutoConfiguration.class,
                    CoschedHttpClientAutoConfiguration.class,
                    SslAutoConfiguration.class,
                    HttpClientAutoConfiguration.class,
                    RestClientAutoConfiguration.class,
                    RestTemplateAutoConfiguration.class));

    private HttpServer server;
    private String base;

    @BeforeEach
    void stub() throws Exception {
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 50);
        server.setExecutor(Executors.newFixedThreadPool(
                4, r -> Thread.ofPlatform().daemon().unstarted(r)));
        server.createContext("/hello", ex -> {
            byte[] body = "hello".getBytes(StandardCharsets.UTF_8);
            ex.sendResponseHeaders(200, body.length);
            ex.getResponseBody().write(body);
            ex.close();
        });
        server.createContext("/slow", ex -> {
            try {
                Thread.sleep(3000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            ex.sendResponseHeaders(200, -1);
            ex.close();
        });
        server.createContext("/moved", ex -> {
            ex.getResponseHeaders().add("Location", "/hello");
            ex.sendResponseHeaders(302, -1);
            ex.close();
        });
        server.start();
        base = "http://127.0.0.1:" + server.getAddress().getPort();
    }

    @AfterEach
    void stopStub() {
        server.stop(0);
    }

    @Test
    void theRestClientBuilderSendsACoroutinesCallsOverItsOwnLoop() {
        runner.run(context -> {
            assertThat(context)
                    .getBean(ClientHttpRequestFactoryBuilder.class)
                    .isInstanceOf(LoopClientHttpRequestFactoryBuilder.class);
            IOManager io = context.getBean(IOManager.class);
            RestClient client = context.getBean(RestClient.Builder.class).build();
            long remote = io.stats().remoteWakeups();
            String body = io.spawnOn(1, () -> {
                        for (int i = 0; i < 10; i++) {
                            client.get().uri(base + "/hello").retrieve().body(String.class);
                        }
                        return client.get().uri(base + "/hello").retrieve().body(String.class);
                    })
                    .join();
            assertThat(body).isEqualTo("hello");
            assertThat(io.stats().remoteWakeups() - remote).isZero();
        });
        // Boot's own choice here (Reactor Netty on its global loops) wakes the coroutine from those loops
        runner.withPropertyValues("cosched.http.client.enabled=false").run(context -> {
            IOManager io = context.getBean(IOManager.class);
            RestClient client = context.getBean(RestClient.Builder.class).build();
            long remote = io.stats().remoteWakeups();
            io.spawnOn(1, () -> {
                        for (int i = 0; i < 10; i++) {
                            client.get().uri(base + "/hello").retrieve().body(String.class);
                        }
                        return null;
                    })
                    .join();
            // most calls park and are woken from Reactor Netty's loops; a reply that lands before its coroutine
            // parks needs no wake-up at all (one CI run counted 9 of 10), so the contrast is "some" against none
            assertThat(io.stats().remoteWakeups() - remote).isPositive();
        });
    }

    @Test
    void theRestTemplateBuilderGetsTheLoopFactoryToo() {
        runner.run(context -> {
            var template = context.getBean(RestTemplateBuilder.class).build();
            assertThat(template.getRequestFactory()).isInstanceOf(LoopClientHttpRequestFactory.class);
            assertThat(template.getForObject(base + "/hello", String.class)).isEqualTo("hello");
        });
    }

    @Test
    void springBootsHttpClientSettingsReachTheFactory() {
        runner.withPropertyValues(
                        "spring.http.clients.read-timeout=150ms",
                        "spring.http.clients.connect-timeout=2s",
                        "spring.http.clients.redirects=dont-follow")
                .run(context -> {
                    IOManager io = context.getBean(IOManager.class);
                    RestClient client =
                            context.getBean(RestClient.Builder.class).build();
                    assertThatThrownBy(() -> io.spawn(() -> client.get()
                                            .uri(base + "/slow")
                                            .retrieve()
                                            .body(String.class))
                                    .join())
                            .cause()
                            .isInstanceOf(ResourceAccessException.class)
                            .hasMessageContaining("Read timed out");
                    var moved = io.spawn(() ->
                                    client.get().uri(base + "/moved").retrieve().toBodilessEntity())
                            .join();
                    assertThat(moved.getStatusCode()).isEqualTo(HttpStatus.FOUND);
                    LoopClientHttpRequestFactory factory = context.getBean(LoopClientHttpRequestFactoryBuilder.class)
                            .build(context.getBean(HttpClientSettings.class));
                    assertThat(factory)
                            .hasToString("LoopClientHttpRequestFactory[cosched-io, connect PT2S, read PT0.15S, "
                                    + "redirects not followed, idle PT30S]");
                });
    }

    @Test
    void cookieHandlingItCannotDoFailsNamingTheProperty() {
        runner.withPropertyValues("spring.http.clients.cookie-handling=enable")
                .run(context -> assertThatThrownBy(
                                () -> context.getBean(RestClient.Builder.class).build())
                        .hasRootCauseInstanceOf(IllegalStateException.class)
                        .rootCause()
                        .hasMessageContaining("spring.http.clients.cookie-handling: enable"));
    }

    @Test
    void backsOffWhenTheApplicationDefinesABuilder() {
        runner.withUserConfiguration(OwnBuilder.class)
                .run(context -> assertThat(context)
                        .getBean(ClientHttpRequestFactoryBuilder.class)
                        .isNotInstanceOf(LoopClientHttpRequestFactoryBuilder.class));
    }

    @Test
    void backsOffWhenTurnedOffOrWhenAFactoryIsChosen() {
        runner.withPropertyValues("cosched.http.client.enabled=false")
                .run(context -> assertThat(context).doesNotHaveBean(LoopClientHttpRequestFactoryBuilder.class));
        runner.withPropertyValues("spring.http.clients.imperative.factory=jdk").run(context -> {
            assertThat(context).doesNotHaveBean(LoopClientHttpRequestFactoryBuilder.class);
            assertThat(context.getBean(RestTemplateBuilder.class).build().getRequestFactory())
                    .isNotInstanceOf(LoopClientHttpRequestFactory.class);
        });
    }

    @Test
    void theIdleTimeoutPropertyIsChecked() {
        runner.withPropertyValues("cosched.http.client.idle-timeout=0s")
                .run(context -> assertThat(context)
                        .hasFailed()
                        .getFailure()
                        .rootCause()
                        .hasMessage("idle-timeout: PT0S (expected: > 0)"));
    }

    @Configuration(proxyBeanMethods = false)
    static class OwnBuilder {
        @Bean
        ClientHttpRequestFactoryBuilder<SimpleClientHttpRequestFactory> simple() {
            return ClientHttpRequestFactoryBuilder.simple();
        }
    }
}
