package io.cosched.internal;

import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.EventExecutorChooserFactory;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Which loop of an IOManager a new channel goes to (an accepted connection, a client connection
 * made through the group): round-robin over the loops that are moving, skipping one the watchdog
 * sees stalled or that has been inside one task for a tenth of the stall threshold. When every loop
 * is in a long task, the first that is not stalled (a loop busy for a moment beats one stuck for good:
 * on a loaded machine a loop serving requests can look busy to the chooser); when every loop is stalled,
 * plain round-robin: a connection must go somewhere.
 */
final class LoopChooser implements EventExecutorChooserFactory.EventExecutorChooser {

    private final LoopCarrier[] carriers;
    private final long busyNanos; // 0: the watchdog is off, so is this
    private final Ticker ticker;
    private final AtomicInteger next = new AtomicInteger();

    LoopChooser(LoopCarrier[] carriers, long stallThresholdNanos, Ticker ticker) {
        this.carriers = carriers;
        this.busyNanos = stallThresholdNanos / 10;
        this.ticker = ticker;
    }

    @Override
    public EventExecutor next() {
        int n = carriers.length;
        int start = Math.floorMod(next.getAndIncrement(), n);
        if (n > 1 && busyNanos > 0) {
            long now = ticker.nanoTime();
            for (int k = 0; k < n; k++) {
                LoopCarrier c = carriers[(start + k) % n];
                if (!c.isStalled() && !c.inOneTaskFor(busyNanos, now)) {
                    return c.loop();
                }
            }
            for (int k = 0; k < n; k++) {
                LoopCarrier c = carriers[(start + k) % n];
                if (!c.isStalled()) {
                    return c.loop();
                }
            }
        }
        return carriers[start].loop();
    }
}
