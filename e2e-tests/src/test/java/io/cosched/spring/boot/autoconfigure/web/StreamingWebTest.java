package io.cosched.spring.boot.autoconfigure.web;

import static org.assertj.core.api.Assertions.assertThat;

import io.cosched.spring.boot.autoconfigure.web.StreamingHandlers.Probe;
import io.cosched.spring.web.CoschedWebStats;
import io.cosched.spring.web.StreamClosedException.Reason;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Request bodies read as streams ({@code InputStream}, {@code @RequestBody InputStream}, {@code MultipartStream})
 * and responses written as streams ({@code StreamingResponseBody}, {@code EventStream}), against a real server, in
 * carrier and fallback mode: where the code runs, that the connection is read only as the handler reads and the
 * producer runs only as far ahead as the client takes, Spring's limits as 413, the request timeout up to the first
 * byte, and a client that leaves.
 */
@Tag("both-modes")
@Timeout(120)
class StreamingWebTest {

    @RegisterExtension
    static final RunningApp app = new RunningApp(
            "cosched.web.request-timeout=2s",
            "spring.webflux.multipart.max-in-memory-size=64KB",
            "spring.webflux.multipart.max-disk-usage-per-part=1MB");

    private static final boolean CARRIER = !"fallback".equals(System.getProperty("cosched.test.expectedMode"));

    private final HttpClient client =
            HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    @AfterEach
    void nothingLeftRunning() throws Exception {
        app.awaitIdle();
    }

    // ---- reading

    @Test
    void anInputStreamArgumentReadsTheBodyInTheRequestsCoroutine() throws Exception {
        HttpResponse<String> r = post("/s/count", new byte[3_000_000]);
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.body()).startsWith("3000000 ");
        assertCoroutine(r.body().substring(r.body().indexOf(' ') + 1));
        HttpResponse<String> body = post("/s/count-body", new byte[100_000]);
        assertThat(body.body()).startsWith("100000 ");
        assertCoroutine(body.body().substring(body.body().indexOf(' ') + 1));
    }

    @Test
    void theConnectionIsReadOnlyAsTheHandlerReads() throws Exception {
        long total = 256L << 20;
        Probe.go = new java.util.concurrent.CountDownLatch(1);
        AtomicLong offered = new AtomicLong();
        CompletableFuture<HttpResponse<String>> upload = client.sendAsync(
                HttpRequest.newBuilder(URI.create(url("/s/count?pauseAfter=1000000")))
                        .POST(HttpRequest.BodyPublishers.ofInputStream(() -> new Zeros(total, offered)))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(Probe.paused.await(30, TimeUnit.SECONDS))
                .as("the handler read a megabyte and paused")
                .isTrue();
        long ahead = Await.stableAfter(offered) - Probe.read.get();
        // what the client got rid of while the handler read nothing: the kernel's socket buffers on both sides and
        // the few buffers asked for ahead, never the body
        assertThat(ahead).as("bytes the client sent past what the handler read").isLessThan(32L << 20);
        Probe.go.countDown();
        HttpResponse<String> r = upload.get(60, TimeUnit.SECONDS);
        assertThat(r.body()).startsWith(total + " ");
    }

    @Test
    void partsAreReadOneAfterAnotherAsTheyArrive() throws Exception {
        String file = "a,b\n".repeat(200_000); // 800 KB: under the per-part limit, over the in-memory one
        HttpResponse<String> r = multipart(
                "/s/parts",
                part("title", null, "hello"),
                part("skip", "ignored.bin", "x".repeat(5000)),
                part("file", "a.csv", file),
                part("after", null, "done"));
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        assertThat(r.body()).isEqualTo("title=hello,file:a.csv:800000,after=done");
    }

    @Test
    void aStreamedPartOverSpringsLimitIsAnswered413() throws Exception {
        HttpResponse<String> r = multipart("/s/parts", part("file", "big.csv", "x".repeat(2_000_000)));
        assertThat(r.statusCode()).as(r.body()).isEqualTo(413);
        HttpResponse<String> field = multipart("/s/parts", part("title", null, "y".repeat(100_000)));
        assertThat(field.statusCode()).as(field.body()).isEqualTo(413);
    }

    @Test
    void aFilePartOverSpringsDiskLimitIsAnswered413NotA500() throws Exception {
        HttpResponse<String> small = multipart("/s/part-file", part("file", "small.csv", "x".repeat(500_000)));
        assertThat(small.body()).isEqualTo("small.csv:500000");
        HttpResponse<String> r = multipart("/s/part-file", part("file", "big.csv", "x".repeat(2_000_000)));
        assertThat(r.statusCode()).as(r.body()).isEqualTo(413);
    }

    @Test
    void aMultipartStreamOfABodyThatIsNotMultipartIsAnswered415() throws Exception {
        HttpResponse<String> r = post("/s/parts", "plain".getBytes(StandardCharsets.US_ASCII));
        assertThat(r.statusCode()).isEqualTo(415);
    }

    // ---- writing

    @Test
    void aStreamingResponseBodyIsWrittenByTheRequestsCoroutine() throws Exception {
        HttpResponse<String> r = get("/s/bytes?n=1000000&write=1000");
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.headers().firstValue("Content-Type")).hasValue("text/csv");
        assertThat(r.body()).hasSize(1_000_000).matches("x+");
        assertCoroutine(Probe.thread);
    }

    @Test
    void aResponseEntityGivesTheStreamItsStatusAndHeaders() throws Exception {
        HttpResponse<String> r = get("/s/download");
        assertThat(r.statusCode()).isEqualTo(201);
        assertThat(r.headers().firstValue("Content-Disposition")).hasValue("attachment; filename=\"report.txt\"");
        assertThat(r.headers().firstValue("Content-Type")).hasValue("text/plain");
        assertCoroutine(r.body().substring("report by ".length()));
    }

    @Test
    void serverSentEventsCarryTheirIdsNamesAndComments() throws Exception {
        HttpResponse<String> r = get("/s/sse?n=3");
        assertThat(r.headers().firstValue("Content-Type"))
                .hasValueSatisfying(t -> assertThat(t).startsWith("text/event-stream"));
        String[] events = r.body().split("\n\n");
        assertThat(events).hasSize(4);
        assertThat(events[0]).isEqualTo(":hello");
        assertThat(events[2]).startsWith("id:2\nevent:tick\ndata:tick 2 ");
        assertCoroutine(events[3].substring(events[3].indexOf("tick 3 ") + "tick 3 ".length()));
    }

    @Test
    void theAcceptHeaderChoosesJsonLinesOrEventsForAnEventStream() throws Exception {
        HttpResponse<String> lines = get("/s/elements?n=3", "Accept", "application/x-ndjson");
        assertThat(lines.headers().firstValue("Content-Type")).hasValue("application/x-ndjson");
        assertThat(lines.body().lines())
                .hasSize(3)
                .allSatisfy(l -> assertThat(l).startsWith("{").contains("\"n\":"));
        HttpResponse<String> events = get("/s/elements?n=2", "Accept", "text/event-stream");
        assertThat(events.body()).startsWith("data:{").contains("\n\ndata:{");
        assertThat(get("/s/elements?n=2", "Accept", "application/xml").statusCode())
                .isEqualTo(406);
    }

    @Test
    void aProducerThatFailsBeforeItsFirstByteGetsAnErrorStatusNotATruncated200() throws Exception {
        HttpResponse<String> r = get("/s/fail-first");
        assertThat(r.statusCode()).isEqualTo(500);
    }

    @Test
    void theRequestTimeoutCoversTheWaitForTheFirstByte() throws Exception {
        HttpResponse<String> r = get("/s/first-late?ms=60000");
        assertThat(r.statusCode()).isEqualTo(503);
        assertThat(r.body()).contains("request timed out after PT2S (cosched.web.request-timeout)");
        assertThat(Probe.ended.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(Probe.endedWith.get()).isInstanceOf(InterruptedException.class);
    }

    @Test
    void aStreamThatHasBegunIsNoLongerCoveredByTheRequestTimeout() throws Exception {
        HttpResponse<String> r = get("/s/sse?n=5&everyMs=600"); // 3 s in all, past the 2 s timeout
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.body()).contains("id:5");
    }

    /**
     * With {@code cosched.web.stream.event-send-buffer} at its default (32 KiB), the producer parks after a few hundred
     * KB at most (the bounded send buffer, the client's receive buffer, a few queued events); with the kernel's
     * autotuned send buffer ({@code 0}) it ran 34,136 events ahead on loopback.
     */
    @Test
    void aProducerRunsNoFurtherAheadThanAClientThatReadsNothing() throws Exception {
        try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), WebTestApp.port(app.context()))) {
            socket.setReceiveBufferSize(64 * 1024);
            send(socket, "GET /s/endless HTTP/1.1\r\nHost: x\r\n\r\n");
            Await.until(() -> Probe.sent.get() > 0, () -> "no event sent");
            long sent = Await.stableAfter(Probe.sent);
            // the socket buffers and at most 32 events queued in Reactor Netty: 5,000 events of ~120 bytes are 600 KB
            assertThat(sent).as("events sent to a client that reads nothing").isLessThan(5_000);
            assertThat(Probe.ended.getCount())
                    .as("the producer is parked, not ended")
                    .isOne();
        }
        assertThat(Probe.ended.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(StreamingHandlers.closedBecause(Probe.endedWith.get(), Reason.CLIENT_GONE))
                .as(String.valueOf(Probe.endedWith.get()))
                .isTrue();
    }

    @Test
    void aClientThatLeavesMidStreamEndsItsProducerAtOnce() throws Exception {
        long cancelled = app.bean(CoschedWebStats.class).cancelled();
        long closedAt;
        try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), WebTestApp.port(app.context()))) {
            send(socket, "GET /s/endless HTTP/1.1\r\nHost: x\r\n\r\n");
            InputStream in = socket.getInputStream();
            byte[] some = new byte[100_000];
            int got = 0;
            while (got < some.length) {
                got += in.read(some, got, some.length - got);
            }
            closedAt = System.nanoTime();
        }
        assertThat(Probe.ended.await(10, TimeUnit.SECONDS)).isTrue();
        long tookMillis = TimeUnit.NANOSECONDS.toMillis(Probe.endedAtNanos - closedAt);
        assertThat(tookMillis).as("from the close to the producer's end").isLessThan(100);
        assertThat(StreamingHandlers.closedBecause(Probe.endedWith.get(), Reason.CLIENT_GONE))
                .as(String.valueOf(Probe.endedWith.get()))
                .isTrue();
        assertThat(app.bean(CoschedWebStats.class).cancelled() - cancelled).isEqualTo(1);
    }

    @Test
    void functionalHandlersStreamTheirBodiesFromTheirCoroutinesToo() throws Exception {
        HttpResponse<String> events = get("/fn/events");
        assertThat(events.headers().firstValue("Content-Type"))
                .hasValueSatisfying(t -> assertThat(t).startsWith("text/event-stream"));
        assertThat(events.body()).startsWith("data:first ").endsWith("\n\ndata:second\n\n");
        assertCoroutine(
                events.body().substring("data:first ".length(), events.body().indexOf('\n')));
        HttpResponse<String> bytes = get("/fn/bytes");
        assertThat(bytes.body()).startsWith("bytes by ");
        assertCoroutine(bytes.body().substring("bytes by ".length()));
    }

    @Test
    void aReactiveHandlerMarkedRunAsCoroutineRunsItsBodyInACoroutine() throws Exception {
        HttpResponse<String> r = get("/s/reactive-marked");
        assertThat(r.statusCode()).isEqualTo(200);
        assertCoroutine(r.body());
    }

    // ---- helpers

    private static void assertCoroutine(String thread) {
        assertThat(thread).startsWith("VirtualThread[");
        if (CARRIER) {
            assertThat(thread).containsPattern("@test-io-\\d$");
        }
    }

    /** The counter once it has not moved for 300 ms: how far something got before it was held back. */
    private String url(String path) {
        return "http://127.0.0.1:" + WebTestApp.port(app.context()) + path;
    }

    private HttpResponse<String> get(String path, String... headers) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(url(path))).timeout(Duration.ofSeconds(60));
        if (headers.length > 0) {
            b.headers(headers);
        }
        return client.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    private HttpResponse<String> post(String path, byte[] body) throws Exception {
        return client.send(
                HttpRequest.newBuilder(URI.create(url(path)))
                        .timeout(Duration.ofSeconds(60))
                        .header("Content-Type", "application/octet-stream")
                        .POST(HttpRequest.BodyPublishers.ofByteArray(body))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
    }

    private static String part(String name, String filename, String content) {
        return "--XyZ\r\nContent-Disposition: form-data; name=\"" + name + "\""
                + (filename == null ? "" : "; filename=\"" + filename + "\"\r\nContent-Type: application/octet-stream")
                + "\r\n\r\n" + content + "\r\n";
    }

    private HttpResponse<String> multipart(String path, String... parts) throws Exception {
        return client.send(
                HttpRequest.newBuilder(URI.create(url(path)))
                        .timeout(Duration.ofSeconds(60))
                        .header("Content-Type", "multipart/form-data; boundary=XyZ")
                        .POST(HttpRequest.BodyPublishers.ofString(String.join("", parts) + "--XyZ--\r\n"))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
    }

    private static void send(Socket socket, String request) throws IOException {
        OutputStream out = socket.getOutputStream();
        out.write(request.getBytes(StandardCharsets.US_ASCII));
        out.flush();
    }

    /** {@code total} zero bytes, counting what was taken. */
    private static final class Zeros extends InputStream {
        private final long total;
        private final AtomicLong taken;

        Zeros(long total, AtomicLong taken) {
            this.total = total;
            this.taken = taken;
        }

        @Override
        public int read() {
            return read(new byte[1], 0, 1) < 0 ? -1 : 0;
        }

        @Override
        public int read(byte[] b, int off, int len) {
            long left = total - taken.get();
            if (left <= 0) {
                return -1;
            }
            int n = (int) Math.min(len, left);
            java.util.Arrays.fill(b, off, off + n, (byte) 0);
            taken.addAndGet(n);
            return n;
        }
    }
}
