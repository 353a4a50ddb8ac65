package io.cosched.internal;

import java.lang.management.ClassLoadingMXBean;
import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;

/**
 * What the JVM says of its own warming up, for telling a warm-up stall from a hog: its JIT compilers' total compiling
 * time so far, and the classes it has loaded so far. Either may be {@link #UNKNOWN}. Tests substitute their own.
 */
interface WarmUpSignals {

    long UNKNOWN = -1;

    /** The JIT compilers' total compiling time so far, in ms. */
    long jitMillis();

    /** Classes loaded since the JVM started. */
    long loadedClasses();

    static WarmUpSignals of(LongSupplier jitMillis, LongSupplier loadedClasses) {
        return new WarmUpSignals() {
            @Override
            public long jitMillis() {
                return jitMillis.getAsLong();
            }

            @Override
            public long loadedClasses() {
                return loadedClasses.getAsLong();
            }
        };
    }

    WarmUpSignals NONE = of(() -> UNKNOWN, () -> UNKNOWN);

    WarmUpSignals SYSTEM = new WarmUpSignals() {
        // Looked up on first use, as the thread times: only needed once a carrier looks stuck.
        private volatile @Nullable CompilationMXBean jit;
        private volatile @Nullable ClassLoadingMXBean classes;
        private volatile boolean noJit;

        @Override
        public long jitMillis() {
            CompilationMXBean mx = jit;
            if (mx == null) {
                if (noJit) {
                    return UNKNOWN;
                }
                mx = ManagementFactory.getCompilationMXBean();
                if (mx == null || !mx.isCompilationTimeMonitoringSupported()) {
                    noJit = true;
                    return UNKNOWN;
                }
                jit = mx;
            }
            return mx.getTotalCompilationTime();
        }

        @Override
        public long loadedClasses() {
            ClassLoadingMXBean mx = classes;
            if (mx == null) {
                classes = mx = ManagementFactory.getClassLoadingMXBean();
            }
            return mx.getTotalLoadedClassCount();
        }
    };
}
