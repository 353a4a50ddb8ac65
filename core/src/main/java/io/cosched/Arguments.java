package io.cosched;

import java.time.Duration;

/**
 * The rules cosched checks arguments by, each failing with a message that names the argument, its
 * value and the rule, e.g. {@code threads: 0 (expected: > 0)}. The builders and helpers of this
 * library use them; they are public so that code taking the same values from elsewhere (the Spring
 * Boot starter's {@code cosched.*} properties) fails as early and in the same words.
 */
public final class Arguments {

    private Arguments() {}

    /**
     * @return {@code value}
     * @throws NullPointerException     if it is null
     * @throws IllegalArgumentException if it is empty or white space only
     */
    public static String nonBlank(String argument, String value) {
        if (value == null) {
            throw new NullPointerException(argument + ": null (expected: a non-blank name)");
        }
        if (value.isBlank()) {
            throw new IllegalArgumentException(argument + ": '" + value + "' (expected: a non-blank name)");
        }
        return value;
    }

    /**
     * @return {@code value}
     * @throws IllegalArgumentException unless it is above zero
     */
    public static int positive(String argument, int value) {
        if (value <= 0) {
            throw new IllegalArgumentException(argument + ": " + value + " (expected: > 0)");
        }
        return value;
    }

    /**
     * @return {@code value}
     * @throws NullPointerException     if it is null
     * @throws IllegalArgumentException if it is negative
     */
    public static Duration nonNegative(String argument, Duration value) {
        return duration(argument, value, false);
    }

    /**
     * @return {@code value}
     * @throws NullPointerException     if it is null
     * @throws IllegalArgumentException if it is zero or negative
     */
    public static Duration positive(String argument, Duration value) {
        return duration(argument, value, true);
    }

    private static Duration duration(String argument, Duration value, boolean positive) {
        if (value == null) {
            throw new NullPointerException(argument + ": null (expected: a duration)");
        }
        if (value.isNegative() || (positive && value.isZero())) {
            throw new IllegalArgumentException(
                    argument + ": " + value + (positive ? " (expected: > 0)" : " (expected: >= 0)"));
        }
        return value;
    }
}
