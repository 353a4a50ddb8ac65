package io.cosched.spring.boot.autoconfigure.web;

import static org.assertj.core.api.Assertions.assertThat;

import io.cosched.spring.boot.autoconfigure.web.StreamingHandlers.Probe;
import io.cosched.spring.web.StreamClosedException.Reason;
import java.io.InputStream;
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
 * cosched.web.stream.read-timeout, write-timeout and max-duration against a real server: a client that stops sending its body
 * gets 408, one that stops reading a stream has its producer ended, and a stream past its time limit is cut.
 */
@Tag("both-modes")
@Timeout(120)
class StreamLimitsWebTest {

    @RegisterExtension
    static final RunningApp app = new RunningApp(
            "cosched.web.request-timeout=30s",
            "cosched.web.stream.read-timeout=1s",
            "cosched.web.stream.write-timeout=1s",
            // max-duration well past write-timeout: the endless producer must first fill the socket buffers, which on a
            // loaded machine took over two seconds, before its write-timeout starts counting
            "cosched.web.stream.max-duration=5s");

    @AfterEach
    void nothingLeftRunning() throws Exception {
        app.awaitIdle();
    }

    @Test
    void aClientThatStopsSendingItsBodyGets408AfterTheIdleTimeout() throws Exception {
        try (Socket socket = connect()) {
            long start = System.nanoTime();
            write(
                    socket,
                    "POST /s/count HTTP/1.1\r\nHost: x\r\nContent-Type: application/octet-stream\r\n"
                            + "Content-Length: 1000000\r\n\r\n" + "z".repeat(1000));
            String answer = readHead(socket);
            assertThat(answer).startsWith("HTTP/1.1 408 Request Timeout");
            assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isBetween(900L, 10_000L);
        }
    }

    @Test
    void aProducerWhoseClientTakesNothingEndsAfterTheIdleTimeout() throws Exception {
        try (Socket socket = connect()) {
            socket.setReceiveBufferSize(64 * 1024);
            write(socket, "GET /s/endless HTTP/1.1\r\nHost: x\r\n\r\n");
            assertThat(Probe.ended.await(10, TimeUnit.SECONDS))
                    .as("the producer ended")
                    .isTrue();
            assertThat(StreamingHandlers.closedBecause(Probe.endedWith.get(), Reason.IDLE_TIMEOUT))
                    .as(String.valueOf(Probe.endedWith.get()))
                    .isTrue();
            // the connection is closed, so that the client cannot take a cut-short stream for a whole one
            socket.setSoTimeout(10_000);
            InputStream in = socket.getInputStream();
            byte[] b = new byte[65536];
            while (in.read(b) >= 0) {
                // drain what was sent before the end
            }
        }
    }

    @Test
    void aStreamPastItsMaxDurationIsInterruptedAndCut() throws Exception {
        try (Socket socket = connect()) {
            long start = System.nanoTime();
            write(socket, "GET /s/quiet HTTP/1.1\r\nHost: x\r\n\r\n");
            String answer = readAll(socket);
            assertThat(answer)
                    .startsWith("HTTP/1.1 200 OK")
                    .contains("data:first")
                    .doesNotEndWith("0\r\n\r\n");
            assertThat(Probe.ended.await(10, TimeUnit.SECONDS)).isTrue();
            assertThat(Probe.endedWith.get()).isInstanceOf(InterruptedException.class);
            assertThat(TimeUnit.NANOSECONDS.toMillis(Probe.endedAtNanos - start))
                    .isBetween(4_900L, 12_000L);
        }
    }

    @Test
    void anUploadPastItsMaxDurationIsAnswered503() throws Exception {
        try (Socket socket = connect()) {
            Probe.go =
                    new java.util.concurrent.CountDownLatch(1); // never counted down: the handler waits past the limit
            write(
                    socket,
                    "POST /s/count?pauseAfter=0 HTTP/1.1\r\nHost: x\r\nContent-Type: application/octet-stream\r\n"
                            + "Content-Length: 10\r\n\r\n0123456789");
            String answer = readHead(socket);
            assertThat(answer)
                    .startsWith("HTTP/1.1 503 Service Unavailable")
                    .contains("cosched.web.stream.max-duration");
        }
    }

    private static Socket connect() throws Exception {
        Socket socket = new Socket(InetAddress.getLoopbackAddress(), WebTestApp.port(app.context()));
        socket.setSoTimeout(20_000);
        return socket;
    }

    private static void write(Socket socket, String request) throws Exception {
        OutputStream out = socket.getOutputStream();
        out.write(request.getBytes(StandardCharsets.US_ASCII));
        out.flush();
    }

    /** What the server sent until it closed the connection. */
    private static String readAll(Socket socket) throws Exception {
        return new String(socket.getInputStream().readAllBytes(), StandardCharsets.US_ASCII);
    }

    /** The status line, headers and body (of a Content-Length) of the answer. */
    private static String readHead(Socket socket) throws Exception {
        InputStream in = socket.getInputStream();
        StringBuilder head = new StringBuilder();
        while (!head.toString().endsWith("\r\n\r\n")) {
            int b = in.read();
            if (b < 0) {
                break;
            }
            head.append((char) b);
        }
        java.util.regex.Matcher length =
                java.util.regex.Pattern.compile("(?i)content-length: (\\d+)").matcher(head);
        return length.find()
                ? head + new String(in.readNBytes(Integer.parseInt(length.group(1))), StandardCharsets.UTF_8)
                : head.toString();
    }
}
