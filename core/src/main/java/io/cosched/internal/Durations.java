package io.cosched.internal;

import java.time.Duration;

/** Argument checks for durations, with messages that name the argument, its value and the rule. */
public final class Durations {

    private Durations() {
    }

    /** The longest delay a timer takes: ~73 years, small enough that {@code now + delay} never overflows. */
    public static final long MAX_NANOS = Long.MAX_VALUE / 4;

    /** {@code d} in nanoseconds, capped at {@link #MAX_NANOS}; zero allowed unless {@code positive}. */
    public static long toNanos(String name, Duration d, boolean positive) {
        if (d == null) {
            throw new NullPointerException(name + ": null (expected: a duration)");
        }
        if (d.isNegative() || (positive && d.isZero())) {
            throw new IllegalArgumentException(name + ": " + d + (positive ? " (expected: > 0)" : " (expected: >= 0)"));
        }
        if (d.getSeconds() >= MAX_NANOS / 1_000_000_000L) {
            return MAX_NANOS;
        }
        return d.toNanos();
    }
}
