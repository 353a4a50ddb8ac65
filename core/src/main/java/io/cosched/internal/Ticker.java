package io.cosched.internal;

/** A source of monotonic nanoseconds; tests drive a manual one. */
@FunctionalInterface
interface Ticker {

    Ticker SYSTEM = System::nanoTime;

    long nanoTime();
}
