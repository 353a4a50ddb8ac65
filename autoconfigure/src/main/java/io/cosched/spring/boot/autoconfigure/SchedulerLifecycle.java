package io.cosched.spring.boot.autoconfigure;

import io.cosched.Scheduler;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.context.SmartLifecycle;

import java.time.Duration;
import java.util.List;

/**
 * Starts the schedulers before the web server and stops them after it. The web server starts and
 * stops at {@code WebServerApplicationContext.START_STOP_LIFECYCLE_PHASE} ({@code DEFAULT_PHASE - 2048})
 * and drains gracefully one phase above; one phase below, in-flight requests finish on live loops
 * and only then do the loops stop.
 *
 * <p>A scheduler may run before the lifecycle starts: the first pooled database connection or HTTP
 * call made while the context is still starting starts the IOManager. Should the context fail to
 * start, {@link #destroy()} stops whatever runs, so no loop thread outlives it.
 */
final class SchedulerLifecycle implements SmartLifecycle, DisposableBean {

    static final int PHASE = SmartLifecycle.DEFAULT_PHASE - 3072;

    private final List<Scheduler> schedulers;
    private final Duration timeout;
    private volatile boolean running;

    SchedulerLifecycle(List<Scheduler> schedulers, Duration timeout) {
        this.schedulers = schedulers;
        this.timeout = timeout;
    }

    @Override
    public void start() {
        schedulers.forEach(Scheduler::start);
        running = true;
    }

    @Override
    public void stop() {
        long deadline = System.nanoTime() + timeout.toNanos();
        // the IOManager last: coroutines of the pool may still talk through its loops
        for (Scheduler s : schedulers.reversed()) {
            s.stop(Duration.ofNanos(Math.max(0, deadline - System.nanoTime())));
        }
        running = false;
    }

    @Override
    public void stop(Runnable callback) {
        // off the closing thread, so Spring's per-phase timeout can still fire
        Thread.ofPlatform().name("cosched-shutdown").start(() -> {
            try {
                stop();
            } finally {
                callback.run();
            }
        });
    }

    /** Stops schedulers still running when the context is destroyed without having stopped this lifecycle. */
    @Override
    public void destroy() {
        stop();
    }

    @Override
    public boolean isRunning() {
        return running;
    }

    /**
     * Not paused with the context (Spring's test framework pauses cached contexts between test
     * classes and restarts them): a stopped scheduler cannot start again, so the schedulers stop only
     * when the context stops or closes.
     */
    @Override
    public boolean isPauseable() {
        return false;
    }

    @Override
    public int getPhase() {
        return PHASE;
    }
}
