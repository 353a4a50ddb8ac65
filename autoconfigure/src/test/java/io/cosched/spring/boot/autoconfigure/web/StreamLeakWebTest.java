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
 * Every buffer of an {@code InputStream} request body goes back to Netty when the client leaves in the middle of it.
 * {@code MultipartStream} still leaks on two paths, so multipart buffers are left out of the count (issue 51's note has
 * their records): a file part over Spring's limit while the handler reads it, and a client that leaves in the middle
 * of a part (in some runs). Netty's leak detector at its
 * paranoid level tracks every buffer; a leak is reported once the buffer is garbage and the detector next tracks one.
 * Each test first leaks a buffer of its own on purpose and waits for its report, so that the detector has reported
 * whatever the requests leaked before it (a test that cannot see leaks fails on that first).
 *
 * <p>An over-limit part is also answered as the application renders its other errors: problem details here
 * ({@code spring.webflux.problemdetails.enabled}), as for a {@code @RequestBody} over its limit.
 */
@Tag("both-modes")
@Timeout(120)
class StreamLeakWebTest {

    @RegisterExtension
    static final RunningApp app = new RunningApp(
            "spring.webflux.multipart.max-in-memory-size=64KB",
            "spring.webflux.multipart.max-disk-usage-per-part=1MB",
            "spring.webflux.problemdetails.enabled=true");

    /**
     * Where the open multipart leaks' buffers went: left out of the count, since such a buffer may turn garbage (and be
     * reported) during any later test of this JVM (the other streaming tests send multipart bodies too); any other leak
     * fails.
     */
    private static final List<String> OPEN_LEAK = List.of(
            "org.springframework.http.codec.multipart.MultipartParser",
            // a part's buffer the handler read and released, whose read buffer another part's slice still holds
            "io.cosched.spring.boot.autoconfigure.web.StreamingHandlers.parts(");

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

    /**
     * Answered as the application renders its errors. Not checked for leaks: Spring's multipart parser, failing over the
     * part limit while its reader takes a few events at a time, still leaves buffers unreleased (their last access is
     * its own release of what it held, {@code MultipartParser.BodyState.dispose}); read by Spring's own reactive code
     * with unbounded demand (a {@code Flux<PartEvent>}), the same upload left none in the runs made. An open question,
     * written in issue 51's note.
     */
    @Test
    void aFilePartOverTheLimitIsAnsweredWithProblemDetails() throws Exception {
        HttpResponse<String> r = multipart(part("file", "big.csv", "x".repeat(2_000_000)));
        assertThat(r.statusCode()).as(r.body()).isEqualTo(413);
        assertThat(r.headers().firstValue("Content-Type")).hasValue("application/problem+json");
        assertThat(r.body()).contains("\"status\":413");
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
        assertThat(leaks.stream()
                        .filter(r ->
                                !r.contains("canary-") && OPEN_LEAK.stream().noneMatch(r::contains))
                        .toList())
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

    private HttpResponse<String> multipartTo(String path, String... parts) throws IOException, InterruptedException {
        // a client of its own each time: the server closes a connection whose body it did not read to the end, and
        // a POST sent on it meanwhile would fail
        HttpClient client =
                HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
        return client.send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + WebTestApp.port(app.context()) + path))
                        .timeout(Duration.ofSeconds(60))
                        .header("Content-Type", "multipart/form-data; boundary=XyZ")
                        .POST(HttpRequest.BodyPublishers.ofString(String.join("", parts) + "--XyZ--\r\n"))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
    }
}
