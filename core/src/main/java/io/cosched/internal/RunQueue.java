package io.cosched.internal;

import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A queue of runnable items with the counts the stats need: coroutine steps
 * ({@link CoroutineImpl}s) and foreign continuations (of threads that inherited a coroutine's
 * scheduler). Many producers, any consumers; never blocks.
 */
final class RunQueue {

    private final ConcurrentLinkedQueue<Runnable> items = new ConcurrentLinkedQueue<>();
    private final AtomicLong steps = new AtomicLong();
    private final AtomicLong foreign = new AtomicLong();

    void offerStep(CoroutineImpl<?> coroutine) {
        steps.incrementAndGet();
        items.offer(coroutine);
    }

    void offerForeign(Runnable continuation) {
        foreign.incrementAndGet();
        items.offer(continuation);
    }

    /** The next item, or {@code null}. */
    Runnable poll() {
        Runnable item = items.poll();
        if (item != null) {
            (item instanceof CoroutineImpl<?> ? steps : foreign).decrementAndGet();
        }
        return item;
    }

    boolean isEmpty() {
        return items.isEmpty();
    }

    /** Coroutine steps queued. */
    long readySteps() {
        return Math.max(0, steps.get());
    }

    /** Everything queued. */
    long depth() {
        return Math.max(0, steps.get() + foreign.get());
    }

    /**
     * Moves everything queued to {@code target}, in order: how a stalled carrier's queue spills to
     * another carrier, and how a stopped one's goes to the JDK's default scheduler.
     *
     * @return how many items moved
     */
    int moveTo(RunTarget target) {
        int n = 0;
        Runnable item;
        while ((item = poll()) != null) {
            if (item instanceof CoroutineImpl<?> co) {
                target.submitStep(co);
            } else {
                target.submitForeign(item);
            }
            n++;
        }
        return n;
    }
}
