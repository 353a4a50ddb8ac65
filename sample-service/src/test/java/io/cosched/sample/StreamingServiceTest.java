package io.cosched.sample;

import static org.assertj.core.api.Assertions.assertThat;

import io.cosched.IOManager;
import io.cosched.spring.web.CoschedWebStats;
import io.micrometer.core.instrument.MeterRegistry;
import io.netty.channel.ChannelOption;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.reactor.netty.NettyServerCustomizer;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;

/**
 * The service's streaming features as its clients use them, behind its Spring Security (HTTP basic, method
 * security), in carrier and fallback mode: server-sent events to many slow clients, whose producers park and lose
 * nothing; a client that leaves; exports as CSV and JSON lines; a multipart CSV upload; a 1 GiB document in bounded
 * memory. The server's send buffers are small, as on a busy host, so that a slow client's window fills quickly.
 */
@SpringBootTest(
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {
            "sample.password-encoding=noop",
            "spring.datasource.url=jdbc:h2:mem:streaming;DB_CLOSE_DELAY=-1",
            "spring.webflux.multipart.max-disk-usage-per-part=1MB",
            // cosched sets an event stream's own send buffer (32KB by default) over the customizer's below
            "cosched.web.stream.event-send-buffer=16KB"
        },
        classes = {SampleService.class, StreamingServiceTest.SmallSendBuffers.class})
@Tag("both-modes")
@Timeout(180)
class StreamingServiceTest {

    private static final String USER = Api.basic("user", "secret");
    private static final String ADMIN = Api.basic("admin", "secret");

    @TestConfiguration(proxyBeanMethods = false)
    static class SmallSendBuffers {
        @Bean
        NettyServerCustomizer smallSendBuffers() {
            return server -> server.childOption(ChannelOption.SO_SNDBUF, 16 * 1024);
        }
    }

    @LocalServerPort
    int port;

    @Autowired
    CoschedWebStats stats;

    @Autowired
    IOManager io;

    @Autowired
    MeterRegistry meters;

    private final HttpClient client =
            HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    @AfterEach
    void nothingLeftRunning() {
        await(() -> stats.inFlight() == 0 && io.stats().coroutines() == 0, () -> stats + " " + io.stats());
    }

    @Test
    void balanceEventsAreProducedInTheCoroutineWithTheViewersSecurityContext() throws Exception {
        try (Events events = new Events(port, "/api/accounts/7/balance-events?everyMs=5", USER)) {
            assertThat(events.status).isEqualTo(200);
            for (int n = 1; n <= 5; n++) {
                String e = events.next();
                assertThat(e).contains("id:" + n + "\n", "event:balance\n", "\"viewer\":\"user\"", "\"id\":7");
            }
        }
        try (Events anonymous = new Events(port, "/api/accounts/7/balance-events", null)) {
            assertThat(anonymous.status).isEqualTo(401);
        }
    }

    @Test
    void slowClientsParkTheirProducersLoseNoEventAndLeaveTheHeapFlat() throws Exception {
        int clients = 200;
        int seconds = 6;
        double before = meters.counter("sample.balance.events").count();
        // the clients on threads of their own, as remote clients are: in fallback mode, virtual threads would queue
        // behind the service's 200 producers on the same two carriers, and read their events seconds late
        ExecutorService pool =
                Executors.newThreadPerTaskExecutor(Thread.ofPlatform().factory());
        List<Future<Long>> read = new ArrayList<>();
        CountDownLatch allRead = new CountDownLatch(clients);
        Semaphore begun = new Semaphore(0);
        CountDownLatch mayClose = new CountDownLatch(1);
        long heapAtStart = -1;
        try {
            for (int c = 0; c < clients; c++) {
                long account = c % 50 + 1;
                read.add(pool.submit(() -> {
                    // one event a second from a producer that could send a thousand: it must wait for the client
                    try (Events events =
                            new Events(port, "/api/accounts/" + account + "/balance-events?everyMs=1", USER)) {
                        assertThat(events.status).isEqualTo(200);
                        begun.release();
                        long last = 0;
                        for (int s = 0; s < seconds; s++) {
                            long id = events.nextId();
                            assertThat(id).as("no event lost").isEqualTo(last + 1);
                            last = id;
                            LockSupport.parkNanos(TimeUnit.SECONDS.toNanos(1));
                        }
                        allRead.countDown();
                        mayClose.await(60, TimeUnit.SECONDS); // the stream stays open until the heap is measured
                        return last;
                    }
                }));
                // the clients arrive one after another, each once the previous stream has begun, as remote clients
                // arrive: opened all at once, 200 producers fill their write windows together (a query an event,
                // hundreds of events each), and on two cores a stream opened last once waited past the request timeout
                // for its producer to start (503, in fallback mode, where the 200 share the JDK's two carriers)
                assertThat(begun.tryAcquire(30, TimeUnit.SECONDS))
                        .as("stream %d began", c)
                        .isTrue();
                if (c == clients - 1) {
                    await(() -> stats.inFlight() == clients, () -> "in flight " + stats);
                    heapAtStart = liveHeap();
                }
            }
            // measured as at the start, with every stream open: a stream torn down meanwhile (its buffers, the
            // cancellation's exceptions) is no growth, and once closed, events a producer buffered are gone
            // 6 s of reading, once the producers have filled their windows: seconds of CPU on a small machine
            await(
                    Duration.ofSeconds(60),
                    () -> allRead.getCount() == 0 || read.stream().anyMatch(Future::isDone),
                    () -> allRead.getCount() + " clients still reading");
            long heapAtEnd = liveHeap();
            mayClose.countDown();
            for (Future<Long> f : read) {
                assertThat(f.get(60, TimeUnit.SECONDS)).isEqualTo(seconds);
            }
            double produced = meters.counter("sample.balance.events").count() - before;
            // unparked, the producers would have sent ~1,000 a second each; parked, what the clients read plus the
            // small socket buffers' and Reactor Netty's window
            assertThat(produced)
                    .as("events produced for %d clients over %d s", clients, seconds)
                    .isLessThan(clients * 400.0);
            // each open stream may hold its write window (Netty's 64 KiB high-water mark, and in fallback mode what
            // the hand-over from producer to loop holds): measured 2-3 MiB in all in carrier mode, 7-18 MiB in
            // fallback mode, for 200 streams; 200 KiB a stream is the bound. A producer that did not park would
            // pile up ~700 KiB a stream (1,000 events of ~115 bytes a second for 6 s), and the count above fails too
            assertThat(heapAtEnd - heapAtStart)
                    .as("live heap growth while %d slow clients streamed", clients)
                    .isLessThan(clients * (200L << 10));
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void aClientThatLeavesEndsItsProducer() throws Exception {
        long cancelled = stats.cancelled();
        try (Events events = new Events(port, "/api/accounts/3/balance-events?everyMs=50", USER)) {
            events.next();
            events.next();
        }
        await(() -> stats.inFlight() == 0 && io.stats().coroutines() == 0, () -> stats + " " + io.stats());
        assertThat(stats.cancelled() - cancelled).isEqualTo(1);
    }

    @Test
    void theCsvExportIsADownloadForAdminsOnly() throws Exception {
        HttpResponse<String> r =
                client.send(request("/api/accounts/export.csv", ADMIN).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.headers().firstValue("Content-Disposition")).hasValue("attachment; filename=\"accounts.csv\"");
        assertThat(r.body().lines()).hasSize(1001).first().isEqualTo("id,owner,balance_cents");
        assertThat(r.body()).contains("\n1000,owner-1000,");
        HttpResponse<String> user =
                client.send(request("/api/accounts/export.csv", USER).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(user.statusCode())
                .as("method security in the producer, before its first byte")
                .isEqualTo(403);
    }

    @Test
    void theJsonLinesExportHasALinePerAccount() throws Exception {
        HttpResponse<String> r = client.send(
                request("/api/accounts/export", ADMIN)
                        .header("Accept", "application/x-ndjson")
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.body().lines()).hasSize(1000).allSatisfy(l -> assertThat(l).startsWith("{\"id\":"));
    }

    @Test
    void depositsImportFromAMultipartCsvPartByPart() throws Exception {
        StringBuilder csv = new StringBuilder();
        for (int i = 1; i <= 50; i++) {
            csv.append(900 + i).append(",100,import-").append(i).append('\n');
        }
        String body = "--B\r\nContent-Disposition: form-data; name=\"note\"\r\n\r\nNovember batch\r\n"
                + "--B\r\nContent-Disposition: form-data; name=\"file\"; filename=\"deposits.csv\"\r\nContent-Type: text/csv\r\n\r\n"
                + csv + "\r\n--B--\r\n";
        HttpResponse<String> r = client.send(
                request("/api/deposits/import", ADMIN)
                        .header("Content-Type", "multipart/form-data; boundary=B")
                        .POST(HttpRequest.BodyPublishers.ofString(body))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        assertThat(r.body()).isEqualTo("{\"deposits\":50,\"note\":\"November batch\"}");
        assertThat(new Api(port).get("/api/accounts/925", ADMIN).body())
                .contains("\"balanceCents\":100", "\"lastModifiedBy\":\"admin\"");
        HttpResponse<String> user = client.send(
                request("/api/deposits/import", USER)
                        .header("Content-Type", "multipart/form-data; boundary=B")
                        .POST(HttpRequest.BodyPublishers.ofString(body))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(user.statusCode()).isEqualTo(403);
        String big = "--B\r\nContent-Disposition: form-data; name=\"file\"; filename=\"big.csv\"\r\n\r\n"
                + "x".repeat(2_000_000) + "\r\n--B--\r\n";
        HttpResponse<String> tooBig = client.send(
                request("/api/deposits/import", ADMIN)
                        .header("Content-Type", "multipart/form-data; boundary=B")
                        .POST(HttpRequest.BodyPublishers.ofString(big))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(tooBig.statusCode())
                .as("over spring.webflux.multipart.max-disk-usage-per-part")
                .isEqualTo(413);
    }

    @Test
    void aGigabyteDocumentPassesThroughInBoundedMemory() throws Exception {
        long size = 1L << 30;
        long heapBefore = liveHeap();
        AtomicLong sent = new AtomicLong();
        long[] heapDuring = new long[3];
        CRC32C expected = new CRC32C();
        InputStream body = new InputStream() {
            private final byte[] block = new byte[64 * 1024];
            private int checked;

            {
                for (int i = 0; i < block.length; i++) {
                    block[i] = (byte) (i * 31);
                }
            }

            @Override
            public int read() {
                throw new UnsupportedOperationException();
            }

            @Override
            public int read(byte[] b, int off, int len) {
                long left = size - sent.get();
                if (left <= 0) {
                    return -1;
                }
                int n = (int) Math.min(Math.min(len, block.length), left);
                System.arraycopy(block, 0, b, off, n);
                expected.update(block, 0, n);
                long total = sent.addAndGet(n);
                // the live heap at a quarter, a half and three quarters of the way
                if (checked < 3 && total >= size / 4 * (checked + 1)) {
                    heapDuring[checked++] = liveHeap();
                }
                return n;
            }
        };
        HttpResponse<String> r = client.send(
                request("/api/documents", USER)
                        .header("Content-Type", "application/octet-stream")
                        .POST(HttpRequest.BodyPublishers.ofInputStream(() -> body))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        assertThat(r.body())
                .isEqualTo("{\"size\":" + size + ",\"crc32c\":\"" + Long.toHexString(expected.getValue())
                        + "\",\"uploadedBy\":\"user\"}");
        for (long h : heapDuring) {
            assertThat(h - heapBefore)
                    .as("live heap growth during a 1 GiB upload (client and server)")
                    .isLessThan(64L << 20);
        }
    }

    // ---- helpers

    private HttpRequest.Builder request(String path, String authorization) {
        return HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .timeout(Duration.ofSeconds(120))
                .header("Authorization", authorization);
    }

    /** The heap still in use after a full collection: what is retained, not what is garbage. */
    private static long liveHeap() {
        System.gc();
        return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    }

    private static void await(
            java.util.function.BooleanSupplier condition, java.util.function.Supplier<String> describe) {
        await(Duration.ofSeconds(20), condition, describe);
    }

    private static void await(
            Duration within,
            java.util.function.BooleanSupplier condition,
            java.util.function.Supplier<String> describe) {
        long deadline = System.nanoTime() + within.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError("not reached within " + within.toSeconds() + " s: " + describe.get());
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
        }
    }

    /** A server-sent-events client on a socket of its own with a small receive buffer, reading an event when asked. */
    private static final class Events implements AutoCloseable {
        private static final Pattern ID = Pattern.compile("(?m)^id:(\\d+)$");

        private final Socket socket;
        private final InputStream in;
        final int status;

        Events(int port, String path, String authorization) throws IOException {
            socket = new Socket();
            socket.setReceiveBufferSize(8 * 1024);
            socket.connect(new java.net.InetSocketAddress(InetAddress.getLoopbackAddress(), port));
            socket.setSoTimeout(30_000);
            socket.getOutputStream()
                    .write(("GET " + path + " HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n"
                                    + (authorization == null ? "" : "Authorization: " + authorization + "\r\n")
                                    + "\r\n")
                            .getBytes(StandardCharsets.US_ASCII));
            in = socket.getInputStream();
            String head = readUntil("\r\n\r\n");
            status = Integer.parseInt(head.substring(9, 12));
        }

        /** The next event (its lines, chunked-encoding sizes aside); comments are skipped. */
        String next() throws IOException {
            for (; ; ) {
                String event = readUntil("\n\n");
                if (event.contains("event:")) {
                    return event.substring(Math.max(0, event.indexOf("id:")));
                }
            }
        }

        long nextId() throws IOException {
            Matcher m = ID.matcher(next());
            assertThat(m.find()).isTrue();
            return Long.parseLong(m.group(1));
        }

        private String readUntil(String end) throws IOException {
            ByteArrayOutputStream b = new ByteArrayOutputStream();
            while (!b.toString(StandardCharsets.UTF_8).endsWith(end)) {
                int c = in.read();
                if (c < 0) {
                    throw new IOException("closed after " + b);
                }
                b.write(c);
            }
            return b.toString(StandardCharsets.UTF_8);
        }

        @Override
        public void close() throws IOException {
            socket.close();
        }
    }
}
