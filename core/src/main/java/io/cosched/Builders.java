package io.cosched;

import java.util.Objects;

/** Argument checks shared by the builders: each message names the argument, its value and the rule. */
final class Builders {

    private Builders() {
    }

    static String name(String name) {
        Objects.requireNonNull(name, "name: null (expected: a non-blank scheduler name)");
        if (name.isBlank()) {
            throw new IllegalArgumentException("name: '" + name + "' (expected: a non-blank scheduler name)");
        }
        return name;
    }

    static int threads(int threads) {
        if (threads <= 0) {
            throw new IllegalArgumentException("threads: " + threads + " (expected: > 0)");
        }
        return threads;
    }

    static int defaultThreads() {
        return Runtime.getRuntime().availableProcessors();
    }
}
