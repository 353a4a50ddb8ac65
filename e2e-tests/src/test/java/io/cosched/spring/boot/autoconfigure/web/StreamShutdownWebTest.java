package io.cosched.spring.boot.autoconfigure.web;

import static org.assertj.core.api.Assertions.assertThat;

import io.cosched.spring.boot.autoconfigure.web.StreamingHandlers.Probe;
import io.cosched.spring.web.StreamClosedException;
import java.io.IOException;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * Graceful shutdown with streams open ({@code cosched.web.stream.shutdown-grace}): server-sent-events streams are
 * told at once and end cleanly, so does a WebSocket (closed 1001), a JSON-lines stream goes on through the grace
 * and is then cut, and the context
 * closes long before Spring's 30 s phase timeout, which is what it waited for before.
 */
@Timeout(120)
class StreamShutdownWebTest {

    private static final int EVENT_STREAMS = 20;

    @Test
    void eventStreamsEndCleanlyAtOnceAndOtherStreamsAreCutAfterTheGrace() throws Exception {
        StreamingHandlers.Probe.reset();
        WebSocketHandlers.Probe.reset();
        ConfigurableApplicationContext context = WebTestApp.startWith(
                List.of("cosched.web.stream.shutdown-grace=5s", "spring.lifecycle.timeout-per-shutdown-phase=30s"));
        Http http = new Http(WebTestApp.port(context));
        List<CompletableFuture<HttpResponse<String>>> events = new ArrayList<>();
        for (int i = 0; i < EVENT_STREAMS; i++) {
            events.add(http.getOnNewConnection("/s/ticks?everyMs=50"));
        }
        CompletableFuture<HttpResponse<String>> lines = http.getOnNewConnection("/s/lines?everyMs=50");
        WebSocketWebTest.Client socket = WebSocketWebTest.Client.open(WebTestApp.port(context), "/ws/ticks", true);
        Await.until(() -> Probe.streaming.get() == EVENT_STREAMS + 1, () -> "streaming: " + Probe.streaming);
        socket.next();

        long closing = System.nanoTime();
        // SIGTERM's path: Spring Boot's shutdown hook closes the context. On a thread of its own: the common pool
        // may have one worker on a small host, and the JDK client completes its answers there
        CompletableFuture<Void> closed = new CompletableFuture<>();
        Thread.ofPlatform().name("closing").start(() -> {
            context.close();
            closed.complete(null);
        });

        for (CompletableFuture<HttpResponse<String>> e : events) {
            // a clean end, so before the grace's cut: the body is whole
            HttpResponse<String> r = e.get(30, TimeUnit.SECONDS);
            assertThat(r.statusCode()).isEqualTo(200);
            assertThat(r.body()).startsWith("data:tick");
        }
        assertThat(socket.closedWith.get(30, TimeUnit.SECONDS))
                .as("a WebSocket closes as going away, once its handler has returned")
                .isEqualTo(1001);
        assertThat(WebSocketHandlers.Probe.endedWith.get())
                .satisfiesAnyOf(
                        e -> assertThat(StreamingHandlers.closedBecause(
                                        (Throwable) e, StreamClosedException.Reason.SHUTDOWN))
                                .isTrue(),
                        e -> assertThat(e).isInstanceOf(InterruptedException.class));
        assertThat(lines.isDone()).as("JSON lines go on through the grace").isFalse();

        assertThat(catchCause(lines)).as("a body cut short must not look whole").isInstanceOf(IOException.class);
        closed.get(60, TimeUnit.SECONDS);
        long took = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - closing);
        assertThat(took).as("the grace, not the 30 s phase timeout").isLessThan(15_000);

        Await.until(() -> Probe.endings.size() == EVENT_STREAMS + 1, () -> "endings: " + Probe.endings);
        assertThat(Probe.endings)
                .as("every producer learnt of the shutdown: in its send, or in its sleep")
                .allSatisfy(t -> assertThat(t)
                        .satisfiesAnyOf(
                                e -> assertThat(StreamingHandlers.closedBecause(
                                                e, StreamClosedException.Reason.SHUTDOWN))
                                        .isTrue(),
                                e -> assertThat(e).isInstanceOf(InterruptedException.class)));
    }

    private static Throwable catchCause(CompletableFuture<?> future) throws Exception {
        try {
            future.get(30, TimeUnit.SECONDS);
            return null;
        } catch (ExecutionException e) {
            return e.getCause();
        }
    }
}
