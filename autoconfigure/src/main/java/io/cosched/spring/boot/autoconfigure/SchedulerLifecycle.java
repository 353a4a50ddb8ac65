package io.cosched.spring.boot.autoconfigure;

import io.cosched.Scheduler;
import io.cosched.SchedulerStats;
import java.time.Duration;
import java.util.List;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.beans.factory.config.DestructionAwareBeanPostProcessor;
import org.springframework.context.SmartLifecycle;

/**
 * The one owner of the schedulers' lives in an application context. {@link Starter} starts every
 * {@link Scheduler} bean as soon as it is made, before any bean that uses it (a per-loop
 * {@code DataSource}, the loop HTTP client, the web server) can reach it, so the engines never start
 * one themselves. This lifecycle stops them after the web server: the server stops at
 * {@code WebServerApplicationContext.START_STOP_LIFECYCLE_PHASE} ({@code DEFAULT_PHASE - 2048}) and
 * drains gracefully one phase above; one phase below, in-flight requests finish on live loops and
 * only then do the loops stop. A context closed without a stop is stopped by {@link #destroy()}, in
 * the same order and with the same timeout; one that fails before this bean exists has its
 * schedulers stopped by {@link Starter} as their beans are destroyed. Either way no loop thread
 * outlives the context.
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

    /** Nothing to start: {@link Starter} started every scheduler when it was made. */
    @Override
    public void start() {
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

    /**
     * Starts each {@link Scheduler} bean once it is initialised (a running one is left as it is), and
     * stops one still running when its bean is destroyed: a context that fails to start after the
     * schedulers did, before this lifecycle bean exists, would otherwise leave their (non-daemon)
     * loop threads behind and the JVM running. After a normal stop they have stopped already.
     */
    static final class Starter implements DestructionAwareBeanPostProcessor {
        @Override
        public Object postProcessAfterInitialization(Object bean, String beanName) {
            if (bean instanceof Scheduler s && s.state() == SchedulerStats.State.NEW) {
                s.start();
            }
            return bean;
        }

        @Override
        public boolean requiresDestruction(Object bean) {
            return bean instanceof Scheduler;
        }

        @Override
        public void postProcessBeforeDestruction(Object bean, String beanName) {
            if (bean instanceof Scheduler s) {
                s.stop(Scheduler.DEFAULT_STOP_TIMEOUT);
            }
        }
    }
}
