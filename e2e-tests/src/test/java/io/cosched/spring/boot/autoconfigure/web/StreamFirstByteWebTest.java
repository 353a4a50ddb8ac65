package io.cosched.spring.boot.autoconfigure.web;

import static org.assertj.core.api.Assertions.assertThat;

import io.cosched.spring.boot.autoconfigure.web.StreamingHandlers.Probe;
import java.net.http.HttpResponse;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code cosched.web.stream.first-byte-timeout}: once a handler has returned a streamed response, its first byte is
 * bound by that limit instead of the request timeout; a request that does not stream keeps the request timeout.
 */
@Tag("both-modes")
@Timeout(60)
class StreamFirstByteWebTest {

    @RegisterExtension
    static final RunningApp app =
            new RunningApp("cosched.web.request-timeout=500ms", "cosched.web.stream.first-byte-timeout=3s");

    @AfterEach
    void nothingLeftRunning() throws Exception {
        app.awaitIdle();
    }

    @Test
    void aStreamWhoseFirstEventComesAfterTheRequestTimeoutStreams() throws Exception {
        HttpResponse<String> r = app.http().get("/s/first-late?ms=1000");
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        assertThat(r.body()).contains("data:late");
    }

    @Test
    void aStreamWithNoFirstByteWithinTheLimitIsAnswered503AndItsProducerInterrupted() throws Exception {
        HttpResponse<String> r = app.http().get("/s/first-late?ms=60000");
        assertThat(r.statusCode()).isEqualTo(503);
        assertThat(r.body())
                .contains("streamed response sent nothing within PT3S (cosched.web.stream.first-byte-timeout)");
        assertThat(Probe.ended.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(Probe.endedWith.get()).isInstanceOf(InterruptedException.class);
    }

    @Test
    void aRequestThatDoesNotStreamKeepsTheRequestTimeout() throws Exception {
        HttpResponse<String> r = app.http().get("/sleep?ms=2000");
        assertThat(r.statusCode()).isEqualTo(503);
        assertThat(r.body()).contains("request timed out after PT0.5S (cosched.web.request-timeout)");
    }
}
