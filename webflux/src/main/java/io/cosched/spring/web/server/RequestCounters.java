package io.cosched.spring.web.server;

import io.cosched.spring.web.CoschedWebStats;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.IntSupplier;

/**
 * The counts behind {@link CoschedWebStats}: written by the request path of this package only, read through the
 * interface by everyone else. Requests in flight, the limit and the queue are {@link Admission}'s, read from it.
 */
final class RequestCounters implements CoschedWebStats {

    private final IntSupplier inFlight;
    private final IntSupplier limit;
    private final IntSupplier queued;
    private final LongAdder timedOut = new LongAdder();
    private final LongAdder shed = new LongAdder();
    private final LongAdder shedEarly = new LongAdder();
    private final LongAdder queueTimedOut = new LongAdder();
    private final LongAdder cancelled = new LongAdder();
    private final LongAdder coroutines = new LongAdder();
    private final LongAdder inlined = new LongAdder();
    private final LongAdder offLoop = new LongAdder();

    RequestCounters(IntSupplier inFlight, IntSupplier limit, IntSupplier queued) {
        this.inFlight = inFlight;
        this.limit = limit;
        this.queued = queued;
    }

    @Override
    public int limit() {
        return limit.getAsInt();
    }

    @Override
    public int queued() {
        return queued.getAsInt();
    }

    @Override
    public long queueTimedOut() {
        return queueTimedOut.sum();
    }

    @Override
    public int inFlight() {
        return inFlight.getAsInt();
    }

    @Override
    public long timedOut() {
        return timedOut.sum();
    }

    @Override
    public long shed() {
        return shed.sum();
    }

    @Override
    public long shedEarly() {
        return shedEarly.sum();
    }

    @Override
    public long cancelled() {
        return cancelled.sum();
    }

    @Override
    public long coroutinesStarted() {
        return coroutines.sum();
    }

    @Override
    public long inlined() {
        return inlined.sum();
    }

    @Override
    public long offLoop() {
        return offLoop.sum();
    }

    void countTimedOut() {
        timedOut.increment();
    }

    void countShed() {
        shed.increment();
    }

    void countQueueTimedOut() {
        queueTimedOut.increment();
    }

    void countShedEarly() {
        shedEarly.increment();
    }

    void countCancelled() {
        cancelled.increment();
    }

    void countCoroutine() {
        coroutines.increment();
    }

    void countInlined() {
        inlined.increment();
    }

    void countOffLoop() {
        offLoop.increment();
    }

    @Override
    public String toString() {
        return "CoschedWebStats[inFlight=" + inFlight() + ", limit=" + limit() + ", queued=" + queued()
                + ", queueTimedOut=" + queueTimedOut() + ", timedOut=" + timedOut() + ", shed=" + shed()
                + ", shedEarly=" + shedEarly()
                + ", cancelled=" + cancelled() + ", coroutinesStarted=" + coroutinesStarted() + ", inlined=" + inlined()
                + ", offLoop=" + offLoop() + "]";
    }
}
