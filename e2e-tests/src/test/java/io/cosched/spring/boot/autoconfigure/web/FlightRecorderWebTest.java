package io.cosched.spring.boot.autoconfigure.web;

import static org.assertj.core.api.Assertions.assertThat;

import io.cosched.IOManager;
import io.cosched.spring.web.CoschedWebStats;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/** A Flight Recorder recording of a running app: a timeout, a cancelled request and two sheds, read back as cosched's events. */
@Timeout(120)
class FlightRecorderWebTest {

    @RegisterExtension
    static final RunningApp app = new RunningApp("cosched.web.request-timeout=500ms", "cosched.web.max-in-flight=2");

    @Test
    void timeoutsCancellationsAndShedsAreRecordedWithTheRequestsRoute(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("web.jfr");
        try (Recording recording = new Recording()) {
            recording.enable("io.cosched.RequestShed");
            recording.enable("io.cosched.RequestTimeout");
            recording.enable("io.cosched.RequestCancelled");
            recording.start();

            assertThat(app.http().get("/sleep?ms=60000").statusCode()).isEqualTo(503); // timed out
            assertThat(WebTestApp.Probe.interrupted.await(10, TimeUnit.SECONDS)).isTrue();
            awaitQuiet();

            WebTestApp.Probe.reset();
            WebTestApp.Probe.holding = new CountDownLatch(1);
            try (Socket client = new Socket(InetAddress.getLoopbackAddress(), WebTestApp.port(app.context()))) {
                OutputStream out = client.getOutputStream();
                out.write("GET /park?ms=60000 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
                out.flush();
                assertThat(WebTestApp.Probe.holding.await(10, TimeUnit.SECONDS)).isTrue();
            } // the client goes: cancelled
            assertThat(WebTestApp.Probe.interrupted.await(10, TimeUnit.SECONDS)).isTrue();
            awaitQuiet();

            WebTestApp.Probe.reset();
            WebTestApp.Probe.holding = new CountDownLatch(2);
            CompletableFuture<HttpResponse<String>> first = app.http().getAsync("/hold");
            CompletableFuture<HttpResponse<String>> second = app.http().getAsync("/hold");
            assertThat(WebTestApp.Probe.holding.await(10, TimeUnit.SECONDS)).isTrue();
            assertThat(app.http().get("/thread?x=1").statusCode()).isEqualTo(503); // before WebFlux
            assertThat(app.http().get("/fn/filtered").statusCode()).isEqualTo(503); // by WebFlux
            WebTestApp.Probe.release.countDown();
            first.get(30, TimeUnit.SECONDS);
            second.get(30, TimeUnit.SECONDS);
            awaitQuiet();

            recording.stop();
            recording.dump(file);
        }

        List<RecordedEvent> events = new ArrayList<>(RecordingFile.readAllEvents(file));
        events.sort(Comparator.comparing(RecordedEvent::getStartTime)); // a file groups events by thread
        assertThat(events)
                .extracting(e -> e.getEventType().getName())
                .containsExactly(
                        "io.cosched.RequestTimeout",
                        "io.cosched.RequestCancelled",
                        "io.cosched.RequestShed",
                        "io.cosched.RequestShed");
        assertThat(events)
                .allSatisfy(e ->
                        assertThat(e.getLong("notRecordedBefore")).as("%s", e).isZero()); // far under the rate limit
        RecordedEvent timeout = events.get(0);
        assertThat(timeout.getString("method")).isEqualTo("GET");
        assertThat(timeout.getString("path")).isEqualTo("/sleep");
        assertThat(timeout.getDuration("timeout")).isEqualTo(Duration.ofMillis(500));
        RecordedEvent cancelled = events.get(1);
        assertThat(cancelled.getString("path")).isEqualTo("/park");
        assertThat(cancelled.getBoolean("interrupted")).isTrue();
        assertThat(cancelled.getDuration("age")).isPositive();
        RecordedEvent early = events.get(2);
        assertThat(early.getString("path")).isEqualTo("/thread");
        assertThat(early.getBoolean("beforeWebFlux")).isTrue();
        assertThat(early.getInt("limit")).isEqualTo(2);
        RecordedEvent late = events.get(3);
        assertThat(late.getString("path")).isEqualTo("/fn/filtered");
        assertThat(late.getBoolean("beforeWebFlux")).isFalse();
    }

    private static void awaitQuiet() throws Exception {
        CoschedWebStats stats = app.bean(CoschedWebStats.class);
        IOManager io = app.bean(IOManager.class);
        Await.until(() -> stats.inFlight() == 0 && io.stats().coroutines() == 0, () -> stats + " " + io.stats());
    }
}
