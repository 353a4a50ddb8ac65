package io.cosched.spring.web.context;

import io.micrometer.context.ContextRegistry;
import io.micrometer.context.ThreadLocalAccessor;
import java.util.concurrent.Callable;
import org.jspecify.annotations.Nullable;
import org.springframework.context.i18n.LocaleContext;
import org.springframework.context.i18n.LocaleContextHolder;
import org.springframework.security.core.context.SecurityContext;
import org.springframework.security.core.context.SecurityContextHolder;
import org.springframework.security.core.context.SecurityContextHolderStrategy;
import org.springframework.util.ClassUtils;
import reactor.util.context.Context;

/**
 * The thread-local contexts a request's code runs with, set around it and cleared after: what {@link ContextRestorer}
 * (the request's coroutine, from its Reactor context) and {@link RequestScopes} (a subtask, from its owner) both carry.
 * Which libraries are there, and how each context is set, lives here once. Each nested class loads only when its
 * library is on the class path.
 */
final class ThreadContexts {

    static final boolean MICROMETER = present("io.micrometer.context.ContextSnapshotFactory");
    static final boolean SECURITY = present("org.springframework.security.core.context.SecurityContextHolder");
    static final boolean REACTIVE_SECURITY =
            present("org.springframework.security.core.context.ReactiveSecurityContextHolder");
    static final boolean LOCALE = present("org.springframework.context.i18n.LocaleContextHolder");
    static final boolean SLF4J = present("org.slf4j.MDC");

    private ThreadContexts() {}

    private static boolean present(String type) {
        return ClassUtils.isPresent(type, ThreadContexts.class.getClassLoader());
    }

    /**
     * The thread-locals registered with Micrometer's context-propagation: whether a request or an owner has any value
     * of them at all (most requests of an application without tracing have none: a snapshot of them would set
     * nothing). Asked each time: accessors may be registered after start.
     */
    static final class Accessors {
        private Accessors() {}

        /** Whether {@code context} holds the key of a registered accessor. */
        static boolean anyKeyIn(ContextRegistry registry, Context context) {
            if (context.isEmpty()) {
                return false;
            }
            for (ThreadLocalAccessor<?> accessor : registry.getThreadLocalAccessors()) {
                if (context.hasKey(accessor.key())) {
                    return true;
                }
            }
            return false;
        }

        /** Whether a registered accessor has a value on this thread. */
        static boolean anyValueHere(ContextRegistry registry) {
            for (ThreadLocalAccessor<?> accessor : registry.getThreadLocalAccessors()) {
                if (accessor.getValue() != null) {
                    return true;
                }
            }
            return false;
        }

        /** Whether a registered accessor carries the thread-local of {@code key} (those of libraries load at start). */
        static boolean carries(ContextRegistry registry, String key) {
            for (ThreadLocalAccessor<?> accessor : registry.getThreadLocalAccessors()) {
                if (key.equals(accessor.key())) {
                    return true;
                }
            }
            return false;
        }
    }

    /** Spring Security's {@link SecurityContextHolder}: what blocking code reads. */
    static final class Security {
        private Security() {}

        /** Runs {@code task} with {@code context} in the holder, cleared after. */
        static <T> T callWith(SecurityContext context, Callable<T> task) throws Exception {
            SecurityContextHolderStrategy holder = SecurityContextHolder.getContextHolderStrategy();
            holder.setContext(context);
            try {
                return task.call();
            } finally {
                holder.clearContext();
            }
        }

        /** Runs {@code task} with {@code context} in the holder, cleared after. */
        static void runWith(SecurityContext context, Runnable task) {
            SecurityContextHolderStrategy holder = SecurityContextHolder.getContextHolderStrategy();
            holder.setContext(context);
            try {
                task.run();
            } finally {
                holder.clearContext();
            }
        }

        /** This thread's security context, or null when it holds no authentication. */
        static @Nullable SecurityContext authenticatedOrNull() {
            SecurityContext c = SecurityContextHolder.getContextHolderStrategy().getContext();
            return c.getAuthentication() == null ? null : c;
        }
    }

    /** Spring's {@link LocaleContextHolder}: what a {@code MessageSource} lookup reads. */
    static final class Locale {
        private Locale() {}

        /** Runs {@code task} with {@code context} in the holder, reset after. */
        static <T> T callWith(LocaleContext context, Callable<T> task) throws Exception {
            LocaleContextHolder.setLocaleContext(context);
            try {
                return task.call();
            } finally {
                LocaleContextHolder.resetLocaleContext();
            }
        }

        /** Runs {@code task} with {@code context} in the holder, reset after. */
        static void runWith(LocaleContext context, Runnable task) {
            LocaleContextHolder.setLocaleContext(context);
            try {
                task.run();
            } finally {
                LocaleContextHolder.resetLocaleContext();
            }
        }
    }
}
