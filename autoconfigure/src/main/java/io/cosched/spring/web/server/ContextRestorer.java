package io.cosched.spring.web.server;

import io.micrometer.context.ContextSnapshot;
import io.micrometer.context.ContextSnapshotFactory;
import org.springframework.util.ClassUtils;
import reactor.util.context.Context;

/**
 * Carries a request's context into its coroutine: the values of every thread-local registered with
 * Micrometer's context-propagation library (MDC keys, the current observation and span, your own)
 * are taken from the request's Reactor context and set on the coroutine while the handler runs,
 * then restored. Without context-propagation on the class path it does nothing.
 */
interface ContextRestorer {

    /** A task that runs {@code task} with {@code context}'s thread-local values set. */
    Runnable wrap(Context context, Runnable task);

    /** context-propagation is an optional dependency of this module: present on its class path or not at all. */
    static ContextRestorer detect() {
        if (ClassUtils.isPresent("io.micrometer.context.ContextSnapshotFactory", ContextRestorer.class.getClassLoader())) {
            return new Micrometer();
        }
        return (context, task) -> task;
    }

    /** Through Micrometer's context-propagation. */
    final class Micrometer implements ContextRestorer {
        private final ContextSnapshotFactory snapshots = ContextSnapshotFactory.builder().build();

        @Override
        public Runnable wrap(Context context, Runnable task) {
            ContextSnapshot snapshot = snapshots.captureFrom(context);
            return () -> {
                try (ContextSnapshot.Scope ignored = snapshot.setThreadLocals()) {
                    task.run();
                }
            };
        }
    }
}
