package io.cosched.spring.boot.autoconfigure.web;

import static org.assertj.core.api.Assertions.assertThat;

import io.cosched.IOManager;
import io.cosched.spring.web.CoschedWebStats;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * A request Spring cancels (its client went away, or a filter gave up) ends its coroutine, and its
 * in-flight slot is held until the coroutine has really ended.
 */
@Timeout(120)
class CancellationWebTest {

    @RegisterExtension
    static final RunningApp app = new RunningApp("cosched.web.max-in-flight=50");

    @Test
    void aClientThatDisconnectsMidHandlerHasItsCoroutineInterruptedWithin100Milliseconds() throws Exception {
        CoschedWebStats stats = app.bean(CoschedWebStats.class);
        long cancelled = stats.cancelled();
        WebTestApp.Probe.holding = new CountDownLatch(1);
        long closedAt;
        try (Socket client = send(WebTestApp.port(app.context()), "/park?ms=60000")) {
            assertThat(WebTestApp.Probe.holding.await(10, TimeUnit.SECONDS))
                    .as("the handler runs")
                    .isTrue();
            closedAt = System.nanoTime();
        }
        assertThat(WebTestApp.Probe.interrupted.await(10, TimeUnit.SECONDS))
                .as("the coroutine was interrupted")
                .isTrue();
        assertThat(TimeUnit.NANOSECONDS.toMillis(WebTestApp.Probe.interruptedAtNanos - closedAt))
                .as("ms from the client's close to the interrupt")
                .isLessThanOrEqualTo(100);
        awaitNoCoroutines(app.context());
        assertThat(stats.cancelled() - cancelled).isEqualTo(1);
    }

    @Test
    void aFilterThatGivesUpOnARequestInterruptsItsCoroutineToo() throws Exception {
        HttpResponse<String> r = app.http().get("/park?ms=60000", "X-Filter-Timeout-Ms", "300");
        assertThat(r.statusCode())
                .as(r.body())
                .isEqualTo(500); // the filter's TimeoutException, answered by Spring Boot
        assertThat(WebTestApp.Probe.interrupted.await(10, TimeUnit.SECONDS))
                .as("the coroutine was interrupted")
                .isTrue();
        awaitNoCoroutines(app.context());
    }

    @Test
    void connectSendDisconnectCyclesNeverRunMoreHandlersThanMaxInFlight() throws Exception {
        // Each handler runs 1 s whatever happens, interrupts included: if a slot were given back when the
        // client goes rather than when the coroutine ends, a thousand quick cycles would run hundreds at once.
        CoschedWebStats stats = app.bean(CoschedWebStats.class);
        long admitted = stats.coroutinesStarted() + stats.shed();
        int port = WebTestApp.port(app.context());
        for (int i = 1; i <= 1000; i++) {
            try (Socket client = send(port, "/stubborn?ms=1000")) {
                // the server has taken the request (started or shed) before the client goes
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                while (stats.coroutinesStarted() + stats.shed() < admitted + i) {
                    assertThat(System.nanoTime() - deadline)
                            .as("request %d not taken: %s", i, stats)
                            .isNegative();
                    LockSupport.parkNanos(100_000);
                }
            }
        }
        awaitNoCoroutines(app.context());
        assertThat(stats.coroutinesStarted() + stats.shed() - admitted).isEqualTo(1000);
        assertThat(WebTestApp.Probe.maxConcurrent.get())
                .as("handlers running at once " + stats)
                .isLessThanOrEqualTo(50)
                .isGreaterThan(1);
    }

    @Test
    void withCancelOnDisconnectOffAHandlerFinishesAfterItsClientHasGone() throws Exception {
        try (ConfigurableApplicationContext context =
                WebTestApp.start("cosched.web.cancel-on-disconnect=false", "cosched.io.name=test-io-b")) {
            CoschedWebStats stats = context.getBean(CoschedWebStats.class);
            WebTestApp.Probe.holding = new CountDownLatch(1);
            try (Socket client = send(WebTestApp.port(context), "/park?ms=300")) {
                assertThat(WebTestApp.Probe.holding.await(10, TimeUnit.SECONDS))
                        .as("the handler runs")
                        .isTrue();
            }
            assertThat(WebTestApp.Probe.finished.await(10, TimeUnit.SECONDS))
                    .as("the handler slept to the end")
                    .isTrue();
            assertThat(WebTestApp.Probe.interrupted.getCount())
                    .as("never interrupted")
                    .isEqualTo(1);
            awaitNoCoroutines(context);
            Await.until(() -> stats.cancelled() == 1, stats::toString);
        }
    }

    /** Opens a connection and sends a GET for {@code path}; the caller closes it. */
    private static Socket send(int port, String path) throws IOException {
        Socket socket = new Socket(InetAddress.getLoopbackAddress(), port);
        OutputStream out = socket.getOutputStream();
        out.write(("GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
        out.flush();
        return socket;
    }

    /** The requests' slots and their coroutines come back together: nothing runs that the stats do not show. */
    private static void awaitNoCoroutines(ConfigurableApplicationContext context) throws Exception {
        CoschedWebStats stats = context.getBean(CoschedWebStats.class);
        IOManager io = context.getBean(IOManager.class);
        Await.until(() -> stats.inFlight() == 0 && io.stats().coroutines() == 0, () -> stats + " " + io.stats());
    }
}
