package io.cosched.spring.web.context;

import io.cosched.Coroutines;
import io.cosched.Internal;
import io.micrometer.context.ContextRegistry;
import io.micrometer.context.ContextSnapshot;
import io.micrometer.context.ContextSnapshotFactory;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import org.jspecify.annotations.Nullable;
import org.springframework.security.core.context.ReactiveSecurityContextHolder;
import org.springframework.security.core.context.SecurityContext;
import org.springframework.security.core.context.SecurityContextHolder;
import reactor.core.Fuseable;
import reactor.util.context.Context;

/**
 * Carries a request's context into its coroutine:
 * <ul>
 *   <li>the values of every thread-local registered with Micrometer's context-propagation library
 *   (MDC keys, the current observation and span, your own), taken from the request's Reactor context;</li>
 *   <li>Spring Security's {@link SecurityContext}, which a WebFlux application keeps in the Reactor
 *   context ({@link ReactiveSecurityContextHolder}), as {@link SecurityContextHolder}'s value: what
 *   blocking code reads ({@code @PreAuthorize} and {@code @Secured} on a blocking service, auditing).</li>
 * </ul>
 * They are set on the coroutine while the handler runs, then cleared or restored. Each part is there
 * only when its library is on the class path.
 */
@Internal
public interface ContextRestorer {

    /** A task that runs {@code task} with {@code context}'s thread-local values set. */
    Runnable wrap(Context context, Runnable task);

    /** Both libraries are optional dependencies of this module: present on its class path or not at all. */
    static ContextRestorer detect() {
        ContextRestorer restorer = (context, task) -> task;
        if (ThreadContexts.REACTIVE_SECURITY) {
            restorer = new SpringSecurity();
        }
        if (ThreadContexts.MICROMETER) {
            ContextRestorer inner = restorer;
            Micrometer micrometer = new Micrometer();
            restorer = (context, task) -> micrometer.wrap(context, inner.wrap(context, task));
        }
        return restorer;
    }

    /**
     * Through Micrometer's context-propagation. A request whose Reactor context holds no key of a
     * registered thread-local accessor (no observation, no MDC bridge, nothing of the application's)
     * has nothing to restore: its task runs unchanged, without a snapshot made and applied for it.
     */
    final class Micrometer implements ContextRestorer {
        private final ContextRegistry registry;
        private final ContextSnapshotFactory snapshots;

        Micrometer() {
            this(ContextRegistry.getInstance());
        }

        Micrometer(ContextRegistry registry) {
            this.registry = registry;
            this.snapshots =
                    ContextSnapshotFactory.builder().contextRegistry(registry).build();
        }

        @Override
        public Runnable wrap(Context context, Runnable task) {
            if (!ThreadContexts.Accessors.anyKeyIn(registry, context)) {
                return task; // a snapshot of it would set nothing
            }
            ContextSnapshot snapshot = snapshots.captureFrom(context);
            return () -> {
                try (ContextSnapshot.Scope ignored = snapshot.setThreadLocals()) {
                    task.run();
                }
            };
        }
    }

    /**
     * Spring Security's reactive context into {@link SecurityContextHolder}. Spring Security's own
     * context-propagation accessor restores the reactive context's value (a {@code Mono}) into a
     * thread-local of its own, which no blocking code reads, so this bridge is cosched's.
     */
    final class SpringSecurity implements ContextRestorer {

        @Override
        public Runnable wrap(Context context, Runnable task) {
            if (!context.hasKey(SecurityContext.class)) {
                return task; // no security filter chain ran for this request
            }
            return () -> {
                SecurityContext security = load(context);
                if (security == null) {
                    task.run();
                    return;
                }
                ThreadContexts.Security.runWith(security, task);
            };
        }

        /**
         * The request's security context, in the coroutine: usually known already (the filter chain
         * put {@code Mono.just(context)} there), else loaded here, parking the coroutine meanwhile (a
         * security context repository that reads the session, say).
         */
        private static @Nullable SecurityContext load(Context context) {
            // Spring Security keeps a Mono under SecurityContext.class (ReactiveSecurityContextHolder's key);
            // after authentication it is Mono.just(context), read without subscribing
            if (context.getOrDefault(SecurityContext.class, null) instanceof Fuseable.ScalarCallable<?> scalar) {
                try {
                    return (SecurityContext) scalar.call();
                } catch (Exception e) {
                    throw new CompletionException(e);
                }
            }
            CompletableFuture<SecurityContext> loaded = ReactiveSecurityContextHolder.getContext()
                    .contextWrite(context)
                    .toFuture();
            try {
                return loaded.isDone() ? loaded.join() : Coroutines.await(loaded);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new CompletionException("interrupted while loading the request's security context", e);
            }
        }
    }
}
