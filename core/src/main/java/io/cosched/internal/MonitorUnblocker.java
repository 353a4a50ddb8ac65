package io.cosched.internal;

import org.jspecify.annotations.Nullable;

/**
 * The JDK's thread that hands a monitor back to the virtual threads blocked entering it: since JDK 24 a virtual
 * thread that blocks on a {@code synchronized} block unmounts, and the JDK's {@code VirtualThread-unblocker} thread
 * resumes it once the monitor is free (one per JVM, started with {@code VirtualThread}). Found by its name the first
 * time it asks for a resume, then by identity.
 */
final class MonitorUnblocker {

    private static final String NAME = "VirtualThread-unblocker";

    private static volatile @Nullable Thread unblocker;

    private MonitorUnblocker() {}

    /** Whether {@code t} is the JDK's monitor unblocker. */
    static boolean is(Thread t) {
        Thread known = unblocker;
        if (known != null) {
            return t == known;
        }
        if (!t.isVirtual() && NAME.equals(t.getName())) {
            unblocker = t;
            return true;
        }
        return false;
    }
}
