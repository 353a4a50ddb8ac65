package io.cosched.spring.boot.autoconfigure;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.SmartLifecycle;

/**
 * {@code cosched.shutdown.delay}: the first thing to stop when the context closes. Spring Boot's web
 * server context turns readiness to {@code REFUSING_TRAFFIC} before any lifecycle stops, so from then
 * on the readiness probe answers 503; this lifecycle then holds the close for the delay while the server
 * goes on accepting and serving, and only after it does the server's graceful shutdown close the
 * listener and drain. A load balancer that checks readiness every few seconds sees the instance leave
 * before its connections are refused, instead of finding the port closed with requests on their way.
 *
 * <p>At the highest phase ({@code DEFAULT_PHASE}), so that nothing the requests of the delay use (the
 * server, message listeners, the schedulers) has stopped yet. Not paused with the context: a cached
 * test context that is paused is not shutting down.
 */
final class ShutdownDelayLifecycle implements SmartLifecycle {

    private static final Logger log = LoggerFactory.getLogger(ShutdownDelayLifecycle.class);

    private final Duration delay;
    private volatile boolean running;

    ShutdownDelayLifecycle(Duration delay, Duration phaseTimeout) {
        this.delay = delay;
        if (!delay.isZero() && delay.compareTo(phaseTimeout) >= 0) {
            log.warn(
                    "cosched.shutdown.delay={} is not below spring.lifecycle.timeout-per-shutdown-phase={}: Spring stops"
                            + " waiting for it after {} and closes the server early; keep the delay below that timeout",
                    delay,
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
        try {
            if (!delay.isZero() && running) {
                log.info(
                        "Readiness refuses traffic; serving on for {} (cosched.shutdown.delay) before the server stops"
                                + " accepting, so that load balancers see the instance leave first",
                        delay);
                TimeUnit.NANOSECONDS.sleep(delay.toNanos());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            running = false;
        }
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
        return SmartLifecycle.DEFAULT_PHASE;
    }
}
