package io.cosched.internal;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/** VarHandles for the lock-free fields of this package, made in static initialisers. */
final class VarHandles {

    private VarHandles() {}

    /** A handle on field {@code name} (of {@code type}) of the class that made {@code lookup}. */
    static VarHandle field(MethodHandles.Lookup lookup, String name, Class<?> type) {
        try {
            return lookup.findVarHandle(lookup.lookupClass(), name, type);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }
}
