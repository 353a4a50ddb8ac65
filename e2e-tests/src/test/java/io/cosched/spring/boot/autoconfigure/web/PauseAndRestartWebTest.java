package io.cosched.spring.boot.autoconfigure.web;

import static org.assertj.core.api.Assertions.assertThat;

import io.cosched.IOManager;
import io.cosched.Timer;
import io.cosched.http.client.HttpStub;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.http.client.ReactorResourceFactory;
import org.springframework.http.client.reactive.ClientHttpConnector;
import org.springframework.web.reactive.function.client.WebClient;

/**
 * Spring Framework 7's test framework pauses a cached context between the test classes that share it
 * and restarts it for the next. Everything cosched put in the application works through and after it:
 * the server on the loops and its coroutine handlers, the RestClient's connections, Boot's WebClient
 * connector with its pools per loop, and the IOManager's timers.
 */
@Timeout(120)
class PauseAndRestartWebTest {

    private HttpStub stub;
    private ConfigurableApplicationContext context;

    @BeforeEach
    void start() throws Exception {
        stub = new HttpStub();
        WebTestApp.Probe.downstreamUri = stub.uri("/hello").toString();
        context = WebTestApp.start();
    }

    @AfterEach
    void stop() {
        context.close();
        stub.close();
    }

    private void everythingServes() throws Exception {
        Http http = new Http(WebTestApp.port(context));
        HttpResponse<String> thread = http.get("/thread");
        assertThat(thread.statusCode()).isEqualTo(200);
        assertThat(thread.body()).contains("@test-io-");
        assertThat(http.get("/fn/thread").body()).contains("@test-io-");
        assertThat(http.get("/downstream").body()).startsWith("hello on ");

        IOManager io = context.getBean(IOManager.class);
        WebClient web = WebClient.builder()
                .clientConnector(context.getBean(ClientHttpConnector.class))
                .build();
        String uri = WebTestApp.Probe.downstreamUri;
        assertThat(io.spawnOn(
                                1,
                                () -> web.get()
                                        .uri(uri)
                                        .retrieve()
                                        .bodyToMono(String.class)
                                        .block())
                        .join())
                .isEqualTo("hello");

        CountDownLatch fired = new CountDownLatch(1);
        Timer timer = io.timers().addTimer(Duration.ofMillis(20), fired::countDown);
        assertThat(fired.await(10, TimeUnit.SECONDS))
                .as("a timer of the IOManager fires: " + timer)
                .isTrue();
    }

    @Test
    void theServerItsCoroutinesItsClientsAndTheTimersServeOnAfterAPauseAndRestart() throws Exception {
        everythingServes();
        context.pause();
        // Spring Boot's web server and Spring's ReactorResourceFactory are no pauseable lifecycles: they serve
        // on through the pause (what does pause, Spring Data Redis's factory, RedisOnTheLoopTest covers)
        assertThat(context.getBean(ReactorResourceFactory.class).isRunning()).isTrue();
        assertThat(new Http(WebTestApp.port(context)).get("/thread").statusCode())
                .isEqualTo(200);
        context.restart();
        everythingServes();
        context.pause(); // twice, as a context shared by three test classes is
        context.restart();
        everythingServes();
    }
}
