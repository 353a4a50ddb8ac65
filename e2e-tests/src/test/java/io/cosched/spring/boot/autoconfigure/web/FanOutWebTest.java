package io.cosched.spring.boot.autoconfigure.web;

import static org.assertj.core.api.Assertions.assertThat;

import io.cosched.IOManager;
import io.cosched.SchedulerStats;
import io.cosched.TestSupport;
import io.micrometer.core.instrument.MeterRegistry;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.slf4j.MDC;
import org.springframework.context.i18n.LocaleContextHolder;
import org.springframework.security.core.context.SecurityContextHolder;

/**
 * Structured fan-out inside a request ({@link FanOutHandlers}): subtasks see the request's context and keep none of it
 * afterwards, and a request timeout, a client that leaves and a failing sibling each end every subtask within 50 ms,
 * the downstream connections of abandoned calls kept for the next request. In carrier and fallback mode.
 */
@Timeout(120)
@Tag("both-modes")
class FanOutWebTest {

    @RegisterExtension
    static final RunningApp app = new RunningApp("cosched.web.request-timeout=600ms", "cosched.io.threads=2");

    private Stub stub;

    @BeforeEach
    void startStub() throws IOException {
        stub = new Stub();
        FanOutHandlers.Probe.downstreamUri = "http://127.0.0.1:" + stub.port() + "/quote";
    }

    @AfterEach
    void stopStub() throws IOException {
        stub.close();
    }

    @Test
    void subtasksSeeTheRequestsContextAndRunOnItsLoop() throws Exception {
        HttpResponse<String> r = app.http().get("/fanout/context", "X-Request-Id", "req-7", "Accept-Language", "fr-CA");
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        List<String> lines = r.body().lines().toList();
        String owner = lines.get(0);
        String context =
                " requestId=req-7 orderId=42 user=alice locale=fr_CA observation=cosched.fork parent-is-request=true";
        assertThat(owner).endsWith(" observation http.server.requests");
        if (app.bean(IOManager.class).isCarrierMode()) {
            String loop = owner.substring("owner ".length(), owner.indexOf(" observation"));
            assertThat(loop).startsWith("on test-io-");
            assertThat(lines.get(1)).isEqualTo("loop " + loop + context);
        } else {
            assertThat(lines.get(1)).startsWith("loop on ForkJoinPool").endsWith(context); // the JDK's scheduler
        }
        assertThat(lines.get(2)).isEqualTo("compute platform cosched-compute" + context);
        app.awaitIdle();
        // nothing of the request is left on the loops' own threads
        IOManager io = app.bean(IOManager.class);
        for (int i = 0; i < io.threads(); i++) {
            String left = io.eventLoop(i)
                    .submit(() -> MDC.getCopyOfContextMap() + " " + LocaleContextHolder.getLocaleContext() + " "
                            + SecurityContextHolder.getContextHolderStrategy()
                                    .getDeferredContext()
                                    .get()
                                    .getAuthentication())
                    .get(10, TimeUnit.SECONDS);
            assertThat(left).as("loop %d", i).isEqualTo("null null null");
        }
        // nor on any compute thread, one of which ran the compute fork
        assertThat(TestSupport.onEveryComputeThread(() -> MDC.getCopyOfContextMap() + " "
                        + LocaleContextHolder.getLocaleContext() + " "
                        + SecurityContextHolder.getContextHolderStrategy()
                                .getDeferredContext()
                                .get()
                                .getAuthentication()))
                .allSatisfy(t -> assertThat(t).endsWith(": null null null"));
    }

    @Test
    void theForksOfRequestsAreCountedAndMetered() throws Exception {
        IOManager io = app.bean(IOManager.class);
        MeterRegistry meters = app.bean(MeterRegistry.class);
        SchedulerStats before = io.stats();
        double meteredBefore = meters.get("cosched.forks")
                .tag("scheduler", io.name())
                .functionCounter()
                .count();
        double cancelledBefore = meters.get("cosched.forks.ended")
                .tags("scheduler", io.name(), "outcome", "cancelled")
                .functionCounter()
                .count();
        assertThat(app.http().get("/fanout/calls?n=3").body()).isEqualTo("ok,ok,ok");
        assertThat(app.http().get("/fanout/one-fails?ms=10").statusCode()).isEqualTo(500);
        app.awaitIdle();
        SchedulerStats after = io.stats();
        assertThat(after.forks() - before.forks()).isEqualTo(6);
        assertThat(after.forksFailed() - before.forksFailed()).isEqualTo(1);
        assertThat(after.forksCancelled() - before.forksCancelled()).isEqualTo(2);
        assertThat(meters.get("cosched.forks")
                                .tag("scheduler", io.name())
                                .functionCounter()
                                .count()
                        - meteredBefore)
                .isEqualTo(6);
        assertThat(meters.get("cosched.forks.ended")
                                .tags("scheduler", io.name(), "outcome", "cancelled")
                                .functionCounter()
                                .count()
                        - cancelledBefore)
                .isEqualTo(2);
    }

    @Test
    void aRequestTimeoutEndsEveryForkWithin50MillisecondsAndTheirConnectionsServeTheNextRequest() throws Exception {
        stub.hold();
        HttpResponse<String> r = app.http().get("/fanout/calls?n=3");
        long answeredAt = System.nanoTime();
        assertThat(r.statusCode()).as(r.body()).isEqualTo(503);
        // the 503 goes out as the forks are cancelled, not after
        Await.until(
                () -> FanOutHandlers.Probe.forkEndedAtNanos.size() == 3,
                () -> "forks ended: " + FanOutHandlers.Probe.forkEndedAtNanos);
        assertEndedWithin50Ms(answeredAt, "the 503");
        app.awaitIdle();
        // the abandoned calls' answers come; the loops read them and keep the connections for the next calls
        stub.release();
        stub.awaitAnswered(3);
        assertThat(app.http().get("/fanout/calls?n=3").body()).isEqualTo("ok,ok,ok");
        assertThat(stub.accepted()).as("connections opened").isEqualTo(3);
        assertThat(stub.resets()).as("connections reset").isZero();
    }

    @Test
    void aScopeOpenedInsideAForkEndsWithTheRequestsDeadline() throws Exception {
        long sentAt = System.nanoTime();
        HttpResponse<String> r = app.http().get("/fanout/nested");
        long answeredAt = System.nanoTime();
        assertThat(r.statusCode()).as(r.body()).isEqualTo(503);
        assertThat(Duration.ofNanos(answeredAt - sentAt))
                .as("answered at the 600 ms request timeout")
                .isLessThan(Duration.ofSeconds(5));
        Await.until(
                () -> FanOutHandlers.Probe.forkEndedAtNanos.size() == 1, () -> "the inner scope's subtask never ended");
        assertEndedWithin50Ms(answeredAt, "the 503");
        app.awaitIdle();
    }

    @Test
    void aClientThatLeavesEndsEveryForkWithin50Milliseconds() throws Exception {
        stub.hold();
        try (Socket client = new Socket(InetAddress.getLoopbackAddress(), WebTestApp.port(app.context()))) {
            OutputStream out = client.getOutputStream();
            out.write("GET /fanout/calls?n=3 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
            out.flush();
            assertThat(FanOutHandlers.Probe.forksRunning.await(10, TimeUnit.SECONDS))
                    .isTrue();
            stub.awaitReceived(3);
        }
        Await.until(
                () -> FanOutHandlers.Probe.forkEndedAtNanos.size() == 3,
                () -> "forks ended: " + FanOutHandlers.Probe.forkEndedAtNanos);
        assertThat(FanOutHandlers.Probe.cancelledAtNanos)
                .as("Spring cancelled the request")
                .isNotZero();
        assertEndedWithin50Ms(FanOutHandlers.Probe.cancelledAtNanos, "the cancel");
        app.awaitIdle();
        stub.release();
        stub.awaitAnswered(3);
        assertThat(app.http().get("/fanout/calls?n=3").body()).isEqualTo("ok,ok,ok");
        assertThat(stub.resets()).as("connections reset").isZero();
    }

    @Test
    void aPartialAnswerShowsWhatCameInTimeAndTheLateSubtaskIsEnded() throws Exception {
        HttpResponse<String> all = app.http().get("/fanout/partial?reviewsMs=20");
        assertThat(all.statusCode()).as(all.body()).isEqualTo(200);
        assertThat(all.body()).isEqualTo("price=42,stock=7,reviews=5 stars");
        FanOutHandlers.Probe.forkEndedAtNanos.clear();

        HttpResponse<String> partial = app.http().get("/fanout/partial?reviewsMs=60000");
        assertThat(partial.statusCode()).as(partial.body()).isEqualTo(200);
        assertThat(partial.body()).isEqualTo("price=42,stock=7,reviews=later");
        assertThat(FanOutHandlers.Probe.forkEndedAtNanos)
                .as("the late reviews subtask ended before the page was answered")
                .hasSize(1);
    }

    @Test
    void aFailingSiblingEndsTheOthersWithin50MillisecondsAndTheRequestFails() throws Exception {
        HttpResponse<String> r = app.http().get("/fanout/one-fails?ms=100");
        assertThat(r.statusCode()).as(r.body()).isEqualTo(500);
        assertThat(FanOutHandlers.Probe.forkEndedAtNanos).hasSize(2);
        assertEndedWithin50Ms(FanOutHandlers.Probe.failedAtNanos, "the failure");
        app.awaitIdle();
    }

    private static void assertEndedWithin50Ms(long sinceNanos, String what) {
        for (long ended : FanOutHandlers.Probe.forkEndedAtNanos) {
            assertThat(TimeUnit.NANOSECONDS.toMillis(ended - sinceNanos))
                    .as("ms from %s to a fork's end", what)
                    .isLessThanOrEqualTo(50);
        }
    }

    /**
     * A downstream HTTP/1.1 server on loopback that answers {@code ok} to every request on a kept-alive connection, or
     * holds its answers until released; it counts connections, requests, answers and resets.
     */
    private static final class Stub implements AutoCloseable {
        private final ServerSocket server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        private final AtomicInteger accepted = new AtomicInteger();
        private final AtomicInteger received = new AtomicInteger();
        private final AtomicInteger answered = new AtomicInteger();
        private final AtomicInteger resets = new AtomicInteger();
        private final List<Socket> sockets = new CopyOnWriteArrayList<>();
        private volatile CountDownLatch held = new CountDownLatch(0);

        Stub() throws IOException {
            Thread.ofPlatform().daemon().name("fanout-stub").start(this::accept);
        }

        int port() {
            return server.getLocalPort();
        }

        void hold() {
            held = new CountDownLatch(1);
        }

        void release() {
            held.countDown();
        }

        int accepted() {
            return accepted.get();
        }

        int resets() {
            return resets.get();
        }

        void awaitReceived(int n) throws Exception {
            Await.until(() -> received.get() >= n, () -> "requests received " + received);
        }

        void awaitAnswered(int n) throws Exception {
            Await.until(() -> answered.get() >= n, () -> "answers written " + answered);
        }

        private void accept() {
            while (!server.isClosed()) {
                try {
                    Socket s = server.accept();
                    accepted.incrementAndGet();
                    sockets.add(s);
                    Thread.ofPlatform().daemon().start(() -> serve(s));
                } catch (IOException closed) {
                    return;
                }
            }
        }

        private void serve(Socket s) {
            try (s;
                    InputStream in = s.getInputStream();
                    OutputStream out = s.getOutputStream()) {
                while (readHead(in)) {
                    received.incrementAndGet();
                    held.await();
                    out.write("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Type: text/plain\r\n\r\nok"
                            .getBytes(StandardCharsets.US_ASCII));
                    out.flush();
                    answered.incrementAndGet();
                }
            } catch (IOException e) {
                if (!server.isClosed()) {
                    resets.incrementAndGet();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }

        /** Reads one request head; false at a clean end of the connection. */
        private static boolean readHead(InputStream in) throws IOException {
            int matched = 0;
            int b;
            while ((b = in.read()) >= 0) {
                matched = b == (matched % 2 == 0 ? '\r' : '\n') ? matched + 1 : b == '\r' ? 1 : 0;
                if (matched == 4) {
                    return true;
                }
            }
            return false;
        }

        @Override
        public void close() throws IOException {
            held.countDown();
            server.close();
            for (Socket s : sockets) {
                s.close();
            }
        }
    }
}
