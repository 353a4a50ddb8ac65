package io.cosched.demo;

import java.time.Duration;

/** Argument checks whose messages name the argument, its value and the rule. */
final class Checks {

    private Checks() {}

    static Duration positive(String name, Duration d) {
        if (d == null || d.isNegative() || d.isZero()) {
            throw new IllegalArgumentException(name + ": " + d + " (expected: > 0)");
        }
        return d;
    }

    static Duration notNegative(String name, Duration d) {
        if (d == null || d.isNegative()) {
            throw new IllegalArgumentException(name + ": " + d + " (expected: >= 0)");
        }
        return d;
    }

    static double rate(String name, double r) {
        if (!(r >= 0 && r <= 1)) {
            throw new IllegalArgumentException(name + ": " + r + " (expected: between 0 and 1)");
        }
        return r;
    }

    static int between(String name, int v, int min, int max) {
        if (v < min || v > max) {
            throw new IllegalArgumentException(name + ": " + v + " (expected: " + min + ".." + max + ")");
        }
        return v;
    }
}
