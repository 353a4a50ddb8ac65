package io.cosched.internal;

import java.util.concurrent.Executor;
import org.jspecify.annotations.Nullable;

/**
 * How cosched makes a coroutine: the one place that knows whether virtual threads can run on an
 * {@link Executor} of ours (carrier mode) or only on the JDK's default scheduler (fallback mode).
 *
 * <p>An SPI so that a public custom-scheduler API in a future JDK can replace the reflective
 * implementation without touching the schedulers. {@link #get()} probes once per JVM.
 */
public abstract class CoroutineThreads {

    static final System.Logger LOG = System.getLogger("io.cosched");

    /**
     * The JVM flag carrier mode needs: the JDK's {@code java.lang} opened to cosched's module, which is
     * {@code ALL-UNNAMED} on the class path and {@code io.cosched} on the module path.
     */
    public static final String ADD_OPENS_FLAG = "--add-opens java.base/java.lang="
            + (CoroutineThreads.class.getModule().isNamed()
                    ? CoroutineThreads.class.getModule().getName()
                    : "ALL-UNNAMED");

    /** The threads chosen for this JVM, probed on first use. */
    public static CoroutineThreads get() {
        return Holder.INSTANCE;
    }

    private final @Nullable String unavailableReason;

    /** @param unavailableReason why carrier mode is unavailable; {@code null} in carrier mode */
    CoroutineThreads(@Nullable String unavailableReason) {
        this.unavailableReason = unavailableReason;
    }

    /** {@code true} when coroutines run on cosched's carriers. */
    public final boolean isCarrierMode() {
        return unavailableReason == null;
    }

    /** Why carrier mode is unavailable, or {@code null} in carrier mode. */
    public final @Nullable String unavailableReason() {
        return unavailableReason;
    }

    /**
     * An unstarted virtual thread that runs {@code body}. In carrier mode its continuation is
     * submitted to {@code scheduler} every time it becomes runnable; in fallback mode
     * {@code scheduler} is ignored.
     */
    public abstract Thread newThread(Executor scheduler, Runnable body);

    /**
     * The scheduler of the current thread when it is a virtual thread running on a cosched
     * {@link Executor} (its own coroutine, or a thread that inherited a coroutine's scheduler),
     * else {@code null}. Always {@code null} in fallback mode.
     */
    public abstract @Nullable Executor currentScheduler();

    /**
     * Where continuations go that no cosched carrier can run any more (after stop): the JDK's
     * default virtual-thread scheduler when reachable, else a small pool of platform threads.
     */
    public abstract Executor orphanExecutor();

    private static final class Holder {
        static final CoroutineThreads INSTANCE = detect();
    }

    private static CoroutineThreads detect() {
        String reason;
        try {
            CarrierModeThreads threads = CarrierModeThreads.probe();
            startJdkPollersOffCarrier();
            return threads;
        } catch (ReflectiveOperationException | RuntimeException e) {
            reason = e.getClass().getSimpleName() + ": " + e.getMessage();
        }
        LOG.log(
                System.Logger.Level.WARNING,
                "cosched runs coroutines as ordinary virtual threads (fallback mode): virtual threads cannot be "
                        + "built on cosched''s carriers ({0}). Start the JVM with {1} to run them on cosched''s "
                        + "carriers and event loops.",
                reason,
                ADD_OPENS_FLAG);
        JfrEvents.fallbackMode(reason, "start the JVM with " + ADD_OPENS_FLAG);
        return new FallbackThreads(reason);
    }

    /**
     * JDK 22+ starts its socket sub-pollers lazily, as virtual threads created by whichever thread
     * first blocks on a socket. Were that a coroutine, the pollers would inherit a cosched carrier
     * as their scheduler and every blocking socket in the JVM would then depend on that carrier.
     * Initialising the poller class here, on the probing platform thread, pins them to the JDK's
     * default scheduler before any coroutine exists.
     */
    private static void startJdkPollersOffCarrier() {
        if (Thread.currentThread().isVirtual()) {
            Thread t =
                    Thread.ofPlatform().daemon().name("cosched-poller-init").unstarted(CoroutineThreads::initPollers);
            t.start();
            try {
                t.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        } else {
            initPollers();
        }
    }

    private static void initPollers() {
        try {
            Class.forName("sun.nio.ch.Poller", true, null);
        } catch (ClassNotFoundException | LinkageError e) {
            LOG.log(System.Logger.Level.DEBUG, "JDK poller class not initialised: {0}", e.toString());
        }
    }
}
