package io.cosched.spring.boot.autoconfigure.web;

import io.cosched.spring.web.server.CoroutineRequests;
import java.time.Duration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.SmartLifecycle;

/**
 * {@code cosched.web.stream.shutdown-grace}: when the context closes, tells the open streamed responses to end
 * ({@link CoroutineRequests#endStreams}) just before the web server's graceful shutdown begins, so that the server
 * does not wait out its whole timeout for server-sent-events streams that never end on their own. Returns at once:
 * the streams end while the server drains, not before it.
 *
 * <p>Between {@code cosched.shutdown.delay} ({@code DEFAULT_PHASE}: the instance serves on, streams included, while
 * load balancers see it leave) and the server's graceful shutdown ({@code DEFAULT_PHASE - 1024}). Not paused with
 * the context: a cached test context that is paused is not shutting down.
 */
final class StreamShutdownLifecycle implements SmartLifecycle {

    /** Above Spring Boot's {@code WebServerApplicationContext.GRACEFUL_SHUTDOWN_PHASE}, below the shutdown delay. */
    static final int PHASE = SmartLifecycle.DEFAULT_PHASE - 512;

    private static final Logger log = LoggerFactory.getLogger(StreamShutdownLifecycle.class);

    private final CoroutineRequests requests;
    private final Duration grace;
    private volatile boolean running;

    StreamShutdownLifecycle(CoroutineRequests requests, Duration grace, Duration phaseTimeout) {
        this.requests = requests;
        this.grace = grace;
        if (grace.compareTo(phaseTimeout) >= 0) {
            log.warn(
                    "cosched.web.stream.shutdown-grace={} is not below spring.lifecycle.timeout-per-shutdown-phase={}:"
                            + " the server stops after {} and closes the streams still open then; keep the grace below"
                            + " that timeout",
                    grace,
                    phaseTimeout,
                    phaseTimeout);
        }
    }

    @Override
    public void start() {
        running = true;
    }

    @Override
    public void stop() {
        running = false;
        requests.endStreams(grace);
    }

    @Override
    public boolean isRunning() {
        return running;
    }

    @Override
    public boolean isPauseable() {
        return false;
    }

    @Override
    public int getPhase() {
        return PHASE;
    }
}
