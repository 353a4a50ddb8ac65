package io.cosched.spring.web.server;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAccumulator;
import java.util.concurrent.atomic.LongAdder;

/**
 * An in-flight limit that follows the latency of the requests it admits (cosched's own gradient, after the idea of
 * Netflix's Gradient2 and Envoy's adaptive concurrency): requests are timed from admission to the end of their code,
 * and each window (at least 100 ms and 10 requests, at most 1 s) compares the window's mean with a slow baseline of
 * what the latency was. While the mean stays within {@code tolerance} times the baseline the limit may grow by its
 * square root, and only when at least half of it was in use (an idle service proves nothing); past it the limit
 * shrinks in proportion, by half at most per window, down to its floor. So when the backend slows down, the requests
 * that wait on it are cut to what it serves within the tolerance, and the rest are shed instead of queueing.
 *
 * <p>The baseline follows a latency that lasts: it falls half-way to a faster window at once, and rises towards a
 * slower one with a time constant of a minute, so that a slowdown of seconds is treated as overload and a lasting
 * change (a new release, more data) is learnt within minutes. The limit then grows back on its own.
 *
 * <p>Thread-safe: {@link #sample} is called by every request's end, from any thread; it adds to striped counters, and
 * the one caller that finds the window over recomputes the limit while the others go on.
 */
final class GradientLimit {

    static final long MIN_WINDOW_NANOS = 100_000_000L;
    static final long MAX_WINDOW_NANOS = 1_000_000_000L;
    static final int MIN_SAMPLES = 10;
    static final long BASELINE_RISE_NANOS = 60_000_000_000L;
    private static final double MIN_GRADIENT = 0.5;

    private final int floor;
    private final int ceiling;
    private final double tolerance;

    private final LongAdder latencySum = new LongAdder();
    private final LongAdder samples = new LongAdder();
    private final LongAccumulator peakInFlight = new LongAccumulator(Math::max, 0);
    private final AtomicBoolean updating = new AtomicBoolean();

    private volatile int limit;
    private volatile long windowStart;
    // owned by the caller that holds `updating`; read elsewhere only for the stats
    private volatile double exact;
    private volatile double baselineNanos;

    /**
     * Checked by {@link AdmissionControl#adaptive}, which every caller but the tests goes through.
     *
     * @param floor     the lowest limit, > 0
     * @param ceiling   the highest, where it starts, >= floor
     * @param tolerance how much slower than the baseline a window may be before the limit shrinks, > 1
     * @param now       the clock's reading now, in nanoseconds
     */
    GradientLimit(int floor, int ceiling, double tolerance, long now) {
        assert floor > 0 && ceiling >= floor && tolerance > 1 : floor + ".." + ceiling + ", " + tolerance;
        this.floor = floor;
        this.ceiling = ceiling;
        this.tolerance = tolerance;
        this.exact = ceiling;
        this.limit = ceiling;
        this.windowStart = now;
    }

    /** How many requests may be in flight now. */
    int limit() {
        return limit;
    }

    /** The latency the limit compares a window with, in nanoseconds; 0 until the first window closed. */
    long baselineNanos() {
        return (long) baselineNanos;
    }

    /**
     * One admitted request ended after {@code latencyNanos}, while {@code inFlight} requests held a slot (itself
     * included). True when this call closed a window and the limit grew: queued requests may be admitted.
     */
    boolean sample(long latencyNanos, int inFlight, long now) {
        long elapsed = now - windowStart;
        if (elapsed >= MAX_WINDOW_NANOS && samples.sum() == 0) {
            windowStart = now; // after a quiet spell a window starts with its first request, not with one alone
            elapsed = 0;
        }
        latencySum.add(latencyNanos);
        samples.increment();
        peakInFlight.accumulate(inFlight);
        if (elapsed < MIN_WINDOW_NANOS || (elapsed < MAX_WINDOW_NANOS && samples.sum() < MIN_SAMPLES)) {
            return false;
        }
        if (!updating.compareAndSet(false, true)) {
            return false; // another request's end is closing this window
        }
        try {
            return close(now);
        } finally {
            updating.set(false);
        }
    }

    private boolean close(long now) {
        long started = windowStart;
        if (now - started < MIN_WINDOW_NANOS) {
            return false; // closed by another caller in between
        }
        windowStart = now;
        long n = samples.sumThenReset();
        double mean = (double) latencySum.sumThenReset() / Math.max(1, n);
        long peak = peakInFlight.getThenReset();
        double base = baselineNanos;
        if (base == 0 || mean < base) {
            base = base == 0 ? mean : (base + mean) / 2;
        } else {
            // a window counts for its length, up to the longest one: a quiet hour is not an hour of this latency
            base += (mean - base) * Math.min(MAX_WINDOW_NANOS, now - started) / BASELINE_RISE_NANOS;
        }
        baselineNanos = base;
        double current = exact;
        double gradient = Math.max(MIN_GRADIENT, Math.min(1.0, tolerance * base / Math.max(1.0, mean)));
        double next;
        if (gradient < 1.0) {
            next = current * gradient;
        } else if (peak * 2 >= current) {
            next = current + Math.sqrt(current);
        } else {
            next = current; // half of it or less in use: no proof that more would be served as fast
        }
        next = Math.max(floor, Math.min(ceiling, next));
        exact = next;
        int before = limit;
        limit = (int) next;
        return limit > before;
    }

    @Override
    public String toString() {
        return "GradientLimit[limit=" + limit + ", baseline=" + baselineNanos() / 1_000 + " us, floor=" + floor
                + ", ceiling=" + ceiling + ", tolerance=" + tolerance + "]";
    }
}
