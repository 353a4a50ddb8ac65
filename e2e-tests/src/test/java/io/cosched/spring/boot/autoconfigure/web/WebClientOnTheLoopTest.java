package io.cosched.spring.boot.autoconfigure.web;

import static org.assertj.core.api.Assertions.assertThat;

import io.cosched.IOManager;
import io.cosched.TestSupport;
import io.cosched.http.client.HttpStub;
import io.cosched.spring.boot.autoconfigure.CoschedAutoConfiguration;
import io.cosched.spring.web.netty.GlobalLoops;
import io.cosched.spring.web.netty.LoopConnectionProvider;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.ssl.SslAutoConfiguration;
import org.springframework.boot.http.client.autoconfigure.HttpClientAutoConfiguration;
import org.springframework.boot.http.client.autoconfigure.reactive.ReactiveHttpClientAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.http.client.ReactorResourceFactory;
import org.springframework.http.client.reactive.ClientHttpConnector;
import org.springframework.web.reactive.function.client.WebClient;

/**
 * Spring Boot's reactive HTTP connector (what its {@code WebClient.Builder} is built on) with cosched's
 * resources: a coroutine that blocks on a {@code WebClient} call is answered over a connection of its own loop.
 */
@Timeout(60)
class WebClientOnTheLoopTest {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withPropertyValues("cosched.io.threads=2", "cosched.stall.threshold=0")
            .withConfiguration(AutoConfigurations.of(
                    CoschedAutoConfiguration.class,
                    CoschedReactorNettyAutoConfiguration.class,
                    SslAutoConfiguration.class,
                    HttpClientAutoConfiguration.class,
                    ReactiveHttpClientAutoConfiguration.class));

    private HttpStub stub;
    private String hello;

    @BeforeEach
    void stub() throws Exception {
        stub = new HttpStub();
        hello = stub.uri("/hello").toString();
    }

    @AfterEach
    void stopStub() {
        stub.close();
    }

    @Test
    void aWebClientNotFromBootsBuilderRunsOnTheLoopsOfItsCaller() {
        java.util.concurrent.atomic.AtomicReference<GlobalLoops> installed =
                new java.util.concurrent.atomic.AtomicReference<>();
        runner.run(context -> {
            IOManager io = context.getBean(IOManager.class);
            GlobalLoops global = context.getBean(GlobalLoops.class);
            assertThat(global.isInstalled()).isTrue();
            // what Spring Security's JWK set client and libraries' own clients are: Reactor Netty's global resources
            WebClient plain = WebClient.create();
            for (int loopIndex = 0; loopIndex < 2; loopIndex++) {
                int home = loopIndex;
                // a new connection each (the global pool's idle connections are shared by the loops): opened on the
                // caller's
                String answeredOn = io.eventLoop(home)
                        .submit(() -> plain.get()
                                .uri(hello)
                                .header("Connection", "close")
                                .retrieve()
                                .bodyToMono(String.class)
                                .map(body ->
                                        body + " on " + Thread.currentThread().getName())
                                .toFuture())
                        .get(10, TimeUnit.SECONDS)
                        .get(10, TimeUnit.SECONDS);
                assertThat(answeredOn).isEqualTo("hello on cosched-io-" + home);
            }
            assertThat(stub.clientPorts).as("a connection each, as asked").hasSize(2);
            installed.set(global);
        });
        assertThat(installed.get().isInstalled())
                .as("given back when the context closed")
                .isFalse();
    }

    @Test
    void theGlobalLoopsStayReactorNettysWhenTurnedOff() {
        runner.withPropertyValues("cosched.web-client.global-loops=false")
                .run(context -> assertThat(context).doesNotHaveBean(GlobalLoops.class));
    }

    @Test
    void aCoroutineBlockingOnBootsWebClientIsResumedByItsOwnLoop() {
        runner.run(context -> {
            assertThat(context.getBean(ReactorResourceFactory.class).getConnectionProvider())
                    .isInstanceOf(LoopConnectionProvider.class);
            IOManager io = context.getBean(IOManager.class);
            WebClient web = WebClient.builder()
                    .clientConnector(context.getBean(ClientHttpConnector.class))
                    .build();
            for (int loopIndex = 0; loopIndex < 2; loopIndex++) {
                int home = loopIndex;
                io.spawnOn(
                                home,
                                () -> web.get()
                                        .uri(hello)
                                        .retrieve()
                                        .bodyToMono(String.class)
                                        .block())
                        .join();
                long remote = io.carrierStats().get(home).remoteWakeups();
                long local = io.carrierStats().get(home).localWakeups();
                String last = io.spawnOn(home, () -> {
                            String body = null;
                            for (int i = 0; i < 30; i++) {
                                body = web.get()
                                        .uri(hello)
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
            // reactive use from outside cosched answers as before
            assertThat(web.get().uri(hello).retrieve().bodyToMono(String.class).block(Duration.ofSeconds(10)))
                    .isEqualTo("hello");
        });
    }

    @Test
    void offWhenTurnedOff() {
        runner.withPropertyValues("cosched.web-client.enabled=false").run(context -> {
            assertThat(context.getBean(ReactorResourceFactory.class).getConnectionProvider())
                    .isNotInstanceOf(LoopConnectionProvider.class);
            WebClient web = WebClient.builder()
                    .clientConnector(context.getBean(ClientHttpConnector.class))
                    .build();
            assertThat(web.get().uri(hello).retrieve().bodyToMono(String.class).block(Duration.ofSeconds(10)))
                    .isEqualTo("hello");
        });
    }
}
