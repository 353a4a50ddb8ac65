package io.cosched.sample;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import io.cosched.spring.web.CoschedWebStats;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * JWT bearer tokens checked against keys from a {@code jwk-set-uri}, the common resource-server setup: Spring
 * Security fetches the key set with a {@code WebClient} of its own, not built from Spring Boot's builder. With cosched
 * that client runs on the loops too: the request that waits for the key set goes on from its own loop (no off-loop
 * hand-off), and no Reactor Netty thread ({@code reactor-http-*}) ever starts. One event loop.
 */
@SpringBootTest(
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {"cosched.io.threads=1", "spring.datasource.url=jdbc:h2:mem:jwks;DB_CLOSE_DELAY=-1"},
        classes = SampleService.class)
@Timeout(120)
class JwkSetOnTheLoopTest {

    private static final Tokens TOKENS = new Tokens();
    private static final AtomicInteger fetched = new AtomicInteger();
    private static HttpServer keys;

    @DynamicPropertySource
    static void jwkSetUri(DynamicPropertyRegistry registry) throws IOException {
        keys = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        keys.createContext("/jwks", exchange -> {
            fetched.incrementAndGet();
            byte[] body = TOKENS.jwkSet().getBytes(StandardCharsets.UTF_8);
            exchange.getResponseHeaders().add("Content-Type", "application/json");
            exchange.sendResponseHeaders(200, body.length);
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(body);
            }
        });
        keys.start();
        registry.add(
                "spring.security.oauth2.resourceserver.jwt.jwk-set-uri",
                () -> "http://127.0.0.1:" + keys.getAddress().getPort() + "/jwks");
    }

    @AfterAll
    static void stopKeys() {
        keys.stop(0);
    }

    @LocalServerPort
    int port;

    @Autowired
    CoschedWebStats stats;

    @Test
    void theKeySetIsFetchedOnTheLoopAndNoReactorNettyThreadStarts() throws Exception {
        Api api = new Api(port);
        long offLoop = stats.offLoop();
        String token = TOKENS.token("erin", Instant.now().plusSeconds(300), "USER");
        for (int i = 0; i < 3; i++) {
            HttpResponse<String> r = api.get("/api/me", Api.bearer(token));
            assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
            assertThat(r.body())
                    .contains("\"name\":\"erin\"")
                    .containsPattern("\"thread\":\"VirtualThread\\[#\\d+\\]/runnable@cosched-io-0\"");
        }
        assertThat(fetched.get()).as("the key set was fetched").isPositive();
        assertThat(stats.offLoop() - offLoop)
                .as("requests that went on from another thread")
                .isZero();
        assertThat(Thread.getAllStackTraces().keySet())
                .extracting(Thread::getName)
                .noneMatch(name -> name.startsWith("reactor-http-"));
    }
}
