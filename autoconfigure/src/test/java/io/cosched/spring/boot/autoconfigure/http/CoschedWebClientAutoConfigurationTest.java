package io.cosched.spring.boot.autoconfigure.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.cosched.IOManager;
import io.cosched.http.client.HttpStub;
import io.cosched.spring.boot.autoconfigure.CoschedAutoConfiguration;
import io.cosched.spring.boot.autoconfigure.web.CoschedReactorNettyAutoConfiguration;
import io.cosched.spring.http.client.reactive.LoopClientHttpConnector;
import java.io.IOException;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.ssl.SslAutoConfiguration;
import org.springframework.boot.http.client.autoconfigure.HttpClientAutoConfiguration;
import org.springframework.boot.http.client.autoconfigure.reactive.ReactiveHttpClientAutoConfiguration;
import org.springframework.boot.http.client.reactive.ClientHttpConnectorBuilder;
import org.springframework.boot.http.client.reactive.JdkClientHttpConnectorBuilder;
import org.springframework.boot.http.client.reactive.ReactorClientHttpConnectorBuilder;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.http.client.reactive.ClientHttpConnector;
import org.springframework.http.client.reactive.ReactorClientHttpConnector;
import org.springframework.web.reactive.function.client.WebClient;
import reactor.core.publisher.Mono;

/**
 * Spring Boot's Reactor Netty connector builder wrapped so that a coroutine's {@code WebClient} calls go over the
 * loop client ({@code LoopWebClientTest} has what those calls do).
 */
@Timeout(60)
class CoschedWebClientAutoConfigurationTest {

    private static final String POST_PROCESSOR = "coschedLoopClientHttpConnectorBuilderPostProcessor";

    // with Reactor Netty on the IOManager's loops, as in an application: Spring Boot's resource factory would put
    // Reactor Netty's global loops in place, whose disposal waits a two-second quiet period per context
    private final ApplicationContextRunner withoutIOManager = new ApplicationContextRunner()
            .withPropertyValues("cosched.io.threads=2", "cosched.scheduler.threads=1", "cosched.stall.threshold=0")
            .withConfiguration(AutoConfigurations.of(
                    CoschedReactorNettyAutoConfiguration.class,
                    CoschedWebClientAutoConfiguration.class,
                    SslAutoConfiguration.class,
                    HttpClientAutoConfiguration.class,
                    ReactiveHttpClientAutoConfiguration.class));

    private final ApplicationContextRunner runner =
            withoutIOManager.withConfiguration(AutoConfigurations.of(CoschedAutoConfiguration.class));

    private HttpStub stub;

    @BeforeEach
    void startStub() throws IOException {
        stub = new HttpStub();
    }

    @AfterEach
    void stopStub() {
        stub.close();
    }

    @Test
    void springBootsConnectorSendsACoroutinesCallsOverTheLoopClientAndTheRestOverReactorNetty() {
        runner.run(context -> {
            IOManager io = context.getBean(IOManager.class);
            assertThat(context.getBean(ClientHttpConnectorBuilder.class))
                    .isInstanceOfSatisfying(
                            LoopClientHttpConnectorBuilder.class,
                            loop -> assertThat(loop.wrapped()).isInstanceOf(ReactorClientHttpConnectorBuilder.class));
            LoopClientHttpConnector connector = (LoopClientHttpConnector) context.getBean(ClientHttpConnector.class);
            assertThat(connector.client().ioManager()).isSameAs(io);
            assertThat(connector.fallback()).isInstanceOf(ReactorClientHttpConnector.class);
            WebClient web = WebClient.builder()
                    .clientConnector(connector)
                    .baseUrl(stub.uri("/").toString())
                    .build();
            assertThat(io.spawnOn(
                                    1,
                                    () -> web.get()
                                            .uri("/hello")
                                            .retrieve()
                                            .bodyToMono(String.class)
                                            .block())
                            .join())
                    .isEqualTo("hello");
            assertThat(connector.client().openedConnections()).isEqualTo(1);
            // a plain thread is no coroutine: Reactor Netty's connection, not a new one of the loop client
            assertThat(web.get()
                            .uri("/hello")
                            .retrieve()
                            .bodyToMono(String.class)
                            .block(Duration.ofSeconds(10)))
                    .isEqualTo("hello");
            assertThat(connector.client().openedConnections()).isEqualTo(1);
        });
    }

    @Test
    void theLoopClientKeepsIdleConnectionsAsLongAsTheBlockingClientDoes() {
        runner.withPropertyValues("cosched.http.client.idle-timeout=7s")
                .run(context -> assertThat(((LoopClientHttpConnector) context.getBean(ClientHttpConnector.class))
                                .client()
                                .settingsDescription())
                        .endsWith("idle PT7S"));
    }

    @Test
    void aConnectorBuilderOfTheApplicationsOwnForAnotherClientIsLeftAlone() {
        runner.withBean(ClientHttpConnectorBuilder.class, ClientHttpConnectorBuilder::jdk)
                .run(context -> {
                    assertThat(context.getBean(ClientHttpConnectorBuilder.class))
                            .isInstanceOf(JdkClientHttpConnectorBuilder.class);
                    assertThat(context.getBean(ClientHttpConnector.class))
                            .isNotInstanceOf(LoopClientHttpConnector.class);
                });
    }

    @Test
    void aConnectorOfTheApplicationsOwnIsLeftAlone() {
        ReactorClientHttpConnector own = new ReactorClientHttpConnector();
        runner.withBean(ClientHttpConnector.class, () -> own)
                .run(context ->
                        assertThat(context.getBean(ClientHttpConnector.class)).isSameAs(own));
    }

    @Test
    void isOffWithCoschedWebClientLoopClientFalse() {
        runner.withPropertyValues("cosched.web-client.loop-client=false")
                .run(CoschedWebClientAutoConfigurationTest::isOff);
    }

    @Test
    void isOffWithCoschedWebClientEnabledFalse() {
        // the loop client needs the per-loop pools this switch turns off too
        runner.withPropertyValues("cosched.web-client.enabled=false").run(CoschedWebClientAutoConfigurationTest::isOff);
    }

    /** {@code cosched.enabled=false} turns all of cosched off, also beside an application's own IOManager. */
    @Test
    void isOffWhenCoschedIsDisabledEvenBesideTheApplicationsOwnIOManager() {
        runner.withPropertyValues("cosched.enabled=false")
                .withBean(
                        IOManager.class,
                        () -> IOManager.builder().name("own").threads(1).build())
                .run(CoschedWebClientAutoConfigurationTest::isOff);
    }

    @Test
    void isOffWithoutAnIOManager() {
        // an application that left cosched's own auto-configuration out: cosched on, but no IOManager
        withoutIOManager.run(CoschedWebClientAutoConfigurationTest::isOff);
    }

    @Test
    void appliesNothingWithoutSpringBootsReactorNettyConnectorBuilder() {
        // Spring Boot still builds Reactor Netty's connector here: only the class condition keeps it unwrapped
        runner.withClassLoader(new FilteredClassLoader(ReactorClientHttpConnectorBuilder.class))
                .run(context -> {
                    assertThat(context).doesNotHaveBean(POST_PROCESSOR);
                    assertThat(context.getBean(ClientHttpConnector.class))
                            .isInstanceOf(ReactorClientHttpConnector.class);
                });
    }

    @Test
    void appliesNothingWithoutCoschedsLoopConnector() {
        runner.withClassLoader(new FilteredClassLoader(LoopClientHttpConnector.class))
                .run(context -> {
                    assertThat(context).doesNotHaveBean(POST_PROCESSOR);
                    assertThat(context.getBean(ClientHttpConnector.class))
                            .isInstanceOf(ReactorClientHttpConnector.class);
                });
    }

    @Test
    void appliesNothingWithoutReactor() {
        runner.withClassLoader(new FilteredClassLoader(Mono.class)).run(context -> {
            assertThat(context).hasNotFailed().hasSingleBean(IOManager.class);
            assertThat(context).doesNotHaveBean(POST_PROCESSOR);
        });
    }

    @Test
    void anotherConnectorChosenInBootsSettingsIsLeftAlone() {
        runner.withPropertyValues("spring.http.clients.reactive.connector=jdk")
                .run(context -> assertThat(context.getBean(ClientHttpConnector.class))
                        .isNotInstanceOf(LoopClientHttpConnector.class));
    }

    /** Spring Boot's own connector builder and connector, untouched, and no post-processor to change them. */
    private static void isOff(AssertableApplicationContext context) {
        assertThat(context).doesNotHaveBean(POST_PROCESSOR);
        assertThat(context.getBean(ClientHttpConnectorBuilder.class))
                .isExactlyInstanceOf(ReactorClientHttpConnectorBuilder.class);
        assertThat(context.getBean(ClientHttpConnector.class)).isInstanceOf(ReactorClientHttpConnector.class);
    }
}
