package io.cosched.spring.boot.autoconfigure.web;

import static org.assertj.core.api.Assertions.assertThat;

import io.cosched.spring.boot.autoconfigure.web.StreamingHandlers.Probe;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code cosched.web.stream.event-send-buffer} (its default, 32 KiB): a client that reads nothing of an event stream
 * parks its producer after a few hundred KB at most (the bounded send buffer, the client's receive buffer, a few
 * queued events), where the kernel's autotuned send buffer on loopback lets it run megabytes ahead.
 */
@Tag("both-modes")
@Timeout(60)
class EventSendBufferWebTest {

    @RegisterExtension
    static final RunningApp app = new RunningApp();

    @AfterEach
    void nothingLeftRunning() throws Exception {
        app.awaitIdle();
    }

    @Test
    void aClientThatReadsNothingParksItsProducerWithinAFewHundredKilobytes() throws Exception {
        try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), WebTestApp.port(app.context()))) {
            socket.setReceiveBufferSize(64 * 1024);
            OutputStream out = socket.getOutputStream();
            out.write("GET /s/endless HTTP/1.1\r\nHost: x\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
            out.flush();
            Await.until(() -> Probe.sent.get() > 0, () -> "no event sent");
            long sent = StreamingWebTest.stableAfter(Probe.sent);
            // events of about 120 bytes on the wire: 5,000 of them are 600 KB
            assertThat(sent).as("events sent to a client that reads nothing").isLessThan(5_000);
            assertThat(Probe.ended.getCount())
                    .as("the producer is parked, not ended")
                    .isOne();
        }
        assertThat(Probe.ended.await(10, TimeUnit.SECONDS)).isTrue();
    }
}
