package io.cosched.internal;

import io.cosched.Arguments;
import java.time.Duration;

/** Durations as the nanoseconds that timers and parks take, checked by {@link Arguments}. */
public final class Durations {

    private Durations() {}

    /** The longest delay a timer takes: ~73 years, small enough that {@code now + delay} never overflows. */
    public static final long MAX_NANOS = Long.MAX_VALUE / 4;

    /** {@code d} in nanoseconds, capped at {@link #MAX_NANOS}; zero allowed unless {@code positive}. */
    public static long toNanos(String name, Duration d, boolean positive) {
        if (positive) {
            Arguments.positive(name, d);
        } else {
            Arguments.nonNegative(name, d);
        }
        if (d.getSeconds() >= MAX_NANOS / 1_000_000_000L) {
            return MAX_NANOS;
        }
        return d.toNanos();
    }
}
