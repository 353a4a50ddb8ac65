package io.cosched.demo;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import tools.jackson.databind.JsonNode;

/** The misbehaving handlers the watchdog docs and the fault suite use. */
@SpringBootTest(
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {"demo.quote.timeout=300ms", "demo.quote.backoff=10ms"}) // QuoteApiTest's context, shared
@Timeout(60)
class FaultsApiTest {

    @LocalServerPort
    int port;

    @Test
    void spinHoldsItsLoopForAsLongAsAskedAndOnlyOnTheLoopAskedFor() throws Exception {
        Api api = new Api(port);
        JsonNode spun = Api.json(api.get("/api/faults/spin?ms=20"));
        assertThat(spun.get("loop").asString()).startsWith("cosched-io-");
        assertThat(spun.get("spunMs").asLong()).isBetween(20L, 10_000L);
        JsonNode elsewhere = Api.json(api.get("/api/faults/spin?ms=20&loop=no-such-loop"));
        assertThat(elsewhere.get("spunMs").asLong()).isZero();
        assertThat(api.get("/api/faults/spin?ms=-1").statusCode()).isEqualTo(400);
    }

    @Test
    void napSleepsOnItsLoopAndSaysWhereItWokeAndHowLate() throws Exception {
        JsonNode nap = Api.json(new Api(port).get("/api/faults/nap?ms=20"));
        assertThat(nap.get("woke").asString())
                .isEqualTo(nap.get("slept").asString())
                .startsWith("cosched-io-");
        assertThat(nap.get("lateMs").asLong()).isBetween(0L, 10_000L);
    }
}
