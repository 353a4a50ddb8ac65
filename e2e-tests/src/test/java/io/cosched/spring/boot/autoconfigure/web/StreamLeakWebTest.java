package io.cosched.spring.boot.autoconfigure.web;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.util.ResourceLeakDetector;
import java.io.IOException;
import java.io.OutputStream;
import java.lang.reflect.Field;
import java.net.InetAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Every buffer of a streamed request body goes back to Netty, whatever ends the read: an {@code InputStream} body or
 * a {@code MultipartStream} whose client leaves in the middle, a part over one of Spring's limits, too many parts, a
 * handler that returns before reading the rest. Netty's leak detector at its paranoid level tracks every buffer; a leak is reported once the buffer is
 * garbage and the detector next tracks one. Each test first leaks a buffer of its own on purpose and waits for its
 * report, so that the detector has reported whatever the requests leaked before it (a test that cannot see leaks
 * fails on that first).
 *
 * <p>An over-limit part is also answered as the application renders its other errors: problem details here
 * ({@code spring.webflux.problemdetails.enabled}), as for a {@code @RequestBody} over its limit.
 *
 * <p>Spring's own multipart reader ({@code @RequestPart FilePart}) is not sent anything here: over its limit its
 * {@code PartGenerator} left buffers unreleased in some runs, in either mode (their last accesses a release in a
 * Reactor window's discard and Reactor Netty's receive queue), a path of Spring's that cosched does not enter, and a
 * buffer left so may turn garbage during a later test. {@code StreamingWebTest} checks its 413.
 */
@Tag("both-modes")
@Timeout(120)
class StreamLeakWebTest {

    @RegisterExtension
    static final RunningApp app = new RunningApp(
            "spring.webflux.multipart.max-in-memory-size=64KB",
            "spring.webflux.multipart.max-disk-usage-per-part=1MB",
            "spring.webflux.multipart.max-parts=5",
            "spring.webflux.problemdetails.enabled=true");

    private static final List<String> leaks = new CopyOnWriteArrayList<>();
    private static final AtomicInteger canaries = new AtomicInteger();
    private static ResourceLeakDetector.Level levelBefore = ResourceLeakDetector.Level.SIMPLE;
    private static ResourceLeakDetector<?> detector;

    @BeforeAll
    static void trackEveryBuffer() throws ReflectiveOperationException {
        levelBefore = ResourceLeakDetector.getLevel();
        ResourceLeakDetector.setLevel(ResourceLeakDetector.Level.PARANOID);
        // the one detector every ByteBuf of Netty's allocators reports to
        Field f = Class.forName("io.netty.buffer.AbstractByteBuf").getDeclaredField("leakDetector");
        f.setAccessible(true);
        detector = (ResourceLeakDetector<?>) f.get(null);
        detector.setLeakListener((type, records) -> leaks.add(records));
    }

    @AfterAll
    static void trackAsBefore() {
        detector.setLeakListener(null);
        ResourceLeakDetector.setLevel(levelBefore);
    }

    @BeforeEach
    void leaksOfEarlierTestsReported() throws Exception {
        awaitCanary();
        leaks.clear();
    }

    @AfterEach
    void nothingLeftRunning() throws Exception {
        app.awaitIdle();
    }

    @Test
    void partsOverALimitAreAnsweredWithProblemDetailsAndReleaseEveryBuffer() throws Exception {
        for (int i = 0; i < 5; i++) {
            HttpResponse<String> r = multipart(part("file", "big.csv", "x".repeat(2_000_000)));
            assertThat(r.statusCode()).as(r.body()).isEqualTo(413);
            assertThat(r.headers().firstValue("Content-Type")).hasValue("application/problem+json");
            assertThat(r.body()).contains("\"status\":413");
            HttpResponse<String> field = multipart(part("title", null, "y".repeat(100_000)));
            assertThat(field.statusCode()).as(field.body()).isEqualTo(413);
            HttpResponse<String> many = multipart(
                    part("a", null, "1"),
                    part("b", null, "2"),
                    part("c", null, "3"),
                    part("d", null, "4"),
                    part("e", null, "5"),
                    part("f", null, "6"));
            assertThat(many.statusCode()).as(many.body()).isEqualTo(400);
        }
        assertNoLeaks();
    }

    @Test
    void aHandlerThatReturnsBeforeTheEndOfTheBodyReleasesEveryBuffer() throws Exception {
        for (int i = 0; i < 5; i++) {
            HttpResponse<String> r = multipartTo(
                    "/s/first-bytes",
                    part("file", "a.csv", "x".repeat(600_000)),
                    part("more", "b.csv", "y".repeat(1000)));
            assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
            assertThat(r.body()).isEqualTo("file:100");
            HttpResponse<String> body = post("/s/first-body-bytes", new byte[600_000]);
            assertThat(body.statusCode()).as(body.body()).isEqualTo(200);
            assertThat(body.body()).isEqualTo("100");
        }
        assertNoLeaks();
    }

    @Test
    void aClientLeavingInTheMiddleOfAPartReleasesEveryBuffer() throws Exception {
        for (int i = 0; i < 4; i++) {
            leaveMidBody(
                    "/s/parts",
                    "multipart/form-data; boundary=XyZ",
                    "--XyZ\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.csv\"\r\n\r\n");
        }
        assertNoLeaks();
    }

    @Test
    void aClientLeavingInTheMiddleOfAnInputStreamBodyReleasesEveryBuffer() throws Exception {
        for (int i = 0; i < 4; i++) {
            leaveMidBody("/s/count", "application/octet-stream", "");
        }
        assertNoLeaks();
    }

    // ---- helpers

    /**
     * Sends {@code head} and 600 KB of a body announced as 10 MB, waits until the handler has begun reading it, and
     * closes the connection.
     */
    private void leaveMidBody(String path, String contentType, String head) throws Exception {
        int port = WebTestApp.port(app.context());
        long begunBefore = app.bean(io.cosched.spring.web.CoschedWebStats.class).coroutinesStarted();
        try (Socket s = new Socket(InetAddress.getLoopbackAddress(), port)) {
            OutputStream out = s.getOutputStream();
            out.write(("POST " + path + " HTTP/1.1\r\nHost: localhost\r\nContent-Type: " + contentType
                            + "\r\nContent-Length: 10000000\r\n\r\n" + head)
                    .getBytes(StandardCharsets.US_ASCII));
            byte[] chunk = new byte[60_000];
            for (int i = 0; i < 10; i++) {
                out.write(chunk);
            }
            out.flush();
            Await.until(
                    () -> app.bean(io.cosched.spring.web.CoschedWebStats.class).coroutinesStarted() > begunBefore,
                    () -> "the handler of " + path + " never began");
        }
        app.awaitIdle(); // its coroutine saw the client leave and ended
    }

    /**
     * Leaks a buffer on purpose and waits until the detector has reported it; then the leaks of the requests before
     * it, garbage by then too, have been reported as well: none may be.
     */
    private void assertNoLeaks() throws Exception {
        awaitCanary();
        assertThat(leaks.stream().filter(r -> !r.contains("canary-")).toList())
                .as("buffers garbage-collected without a release")
                .isEmpty();
    }

    /** Leaks a buffer of its own and waits until the detector has reported it. */
    private static void awaitCanary() throws Exception {
        String canary = "canary-" + canaries.incrementAndGet();
        leakOne(canary);
        Await.until(
                () -> {
                    System.gc();
                    // the detector reports what the collector found when it next tracks a buffer
                    PooledByteBufAllocator.DEFAULT.directBuffer(1).release();
                    return leaks.stream().anyMatch(r -> r.contains(canary));
                },
                () -> "the detector never reported the buffer leaked on purpose (" + canary + ")");
    }

    private static void leakOne(String hint) {
        ByteBuf b = PooledByteBufAllocator.DEFAULT.directBuffer(8);
        b.touch(hint); // a record of its own: the detector reports each distinct record once
    }

    private static String part(String name, String filename, String content) {
        return "--XyZ\r\nContent-Disposition: form-data; name=\"" + name + "\""
                + (filename == null ? "" : "; filename=\"" + filename + "\"\r\nContent-Type: application/octet-stream")
                + "\r\n\r\n" + content + "\r\n";
    }

    private HttpResponse<String> multipart(String... parts) throws IOException, InterruptedException {
        return multipartTo("/s/parts", parts);
    }

    private HttpResponse<String> post(String path, byte[] body) throws IOException, InterruptedException {
        return send(path, "application/octet-stream", HttpRequest.BodyPublishers.ofByteArray(body));
    }

    private HttpResponse<String> multipartTo(String path, String... parts) throws IOException, InterruptedException {
        return send(
                path,
                "multipart/form-data; boundary=XyZ",
                HttpRequest.BodyPublishers.ofString(String.join("", parts) + "--XyZ--\r\n"));
    }

    private HttpResponse<String> send(String path, String contentType, HttpRequest.BodyPublisher body)
            throws IOException, InterruptedException {
        // a client of its own each time: the server closes a connection whose body it did not read to the end, and
        // a POST sent on it meanwhile would fail
        HttpClient client =
                HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
        return client.send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + WebTestApp.port(app.context()) + path))
                        .timeout(Duration.ofSeconds(60))
                        .header("Content-Type", contentType)
                        .POST(body)
                        .build(),
                HttpResponse.BodyHandlers.ofString());
    }
}
