package io.cosched.spring.web.context;

import io.cosched.Internal;
import io.cosched.ScopeHook;
import io.micrometer.context.ContextRegistry;
import io.micrometer.context.ContextSnapshot;
import io.micrometer.context.ContextSnapshotFactory;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.slf4j.MDC;
import org.springframework.context.i18n.LocaleContext;
import org.springframework.context.i18n.LocaleContextHolder;
import org.springframework.security.core.context.SecurityContext;
import org.springframework.security.core.context.SecurityContextHolder;
import org.springframework.util.function.SingletonSupplier;
import org.springframework.web.server.ServerWebExchange;

/**
 * What a {@link io.cosched.TaskScope} opened by a request's code gets from the request (its deadline it gets from the
 * request's coroutine, {@link io.cosched.Coroutine#deadline()}): each subtask runs with the owner's context as it was at the
 * fork: its MDC, every thread-local registered with Micrometer's context-propagation (the current observation, so
 * trace ids follow), Spring Security's {@link SecurityContextHolder} and Spring's {@link LocaleContextHolder}, all
 * cleared again when the subtask ends. Where the owner has a current observation, each subtask is an observation of
 * its own, {@value #OBSERVATION}, its child (a span per subtask where tracing is on). Each part is there only when
 * its library is on the class path.
 *
 * <p>Wiring: public for the starter, which sets it as the IOManager's {@link ScopeHook}; not an API.
 */
@Internal
public final class RequestScopes implements ScopeHook {

    /** The observation each subtask of a request is, when the owner has one: its low-cardinality key {@code cosched.scope}. */
    public static final String OBSERVATION = "cosched.fork";

    private final Supplier<ObservationRegistry> observations;
    private final @Nullable ContextSnapshotFactory snapshots; // there when MICROMETER is
    // SecurityContextHolder set by this hook itself: only when no context-propagation accessor carries it already
    // (Spring
    // Security registers one, SecurityContextHolderThreadLocalAccessor, which the snapshot then sets and resets)
    private final boolean carrySecurity;

    /** @param observations the application's registry, asked for at the first fork (noop when it has none) */
    public RequestScopes(Supplier<ObservationRegistry> observations) {
        this.observations = SingletonSupplier.of(observations); // a bean lookup once, not at every fork
        this.snapshots =
                ThreadContexts.MICROMETER ? ContextSnapshotFactory.builder().build() : null;
        this.carrySecurity = ThreadContexts.SECURITY
                && !(ThreadContexts.MICROMETER
                        && ThreadContexts.Accessors.carries(
                                ContextRegistry.getInstance(),
                                "org.springframework.security.core.context.SecurityContext"));
    }

    @Override
    public Callable<Object> decorate(String scope, Callable<Object> task) {
        Callable<Object> observed = observed(scope, task);
        Callable<Object> withSnapshot = snapshots != null ? withSnapshot(snapshots, observed) : observed;
        Callable<Object> withSecurity = carrySecurity ? Security.carry(withSnapshot) : withSnapshot;
        Callable<Object> withLocale = ThreadContexts.LOCALE ? withLocale(withSecurity) : withSecurity;
        return ThreadContexts.SLF4J ? withMdc(withLocale) : withLocale;
    }

    /** The subtask as an observation of its own, the owner's current one its parent; as is when the owner has none. */
    private Callable<Object> observed(String scope, Callable<Object> task) {
        ObservationRegistry registry = observations.get();
        Observation parent = registry.getCurrentObservation();
        if (parent == null || registry.isNoop()) {
            return task;
        }
        return () -> Observation.createNotStarted(OBSERVATION, registry)
                .parentObservation(parent)
                .contextualName("fork " + scope)
                .lowCardinalityKeyValue("cosched.scope", scope)
                .observeChecked(task::call);
    }

    /** Every registered thread-local of the owner (the current observation among them) set around the subtask. */
    private static Callable<Object> withSnapshot(ContextSnapshotFactory snapshots, Callable<Object> task) {
        if (!ThreadContexts.Accessors.anyValueHere(ContextRegistry.getInstance())) {
            return task; // an empty snapshot would set nothing: most subtasks of an application without tracing
        }
        ContextSnapshot snapshot = snapshots.captureAll();
        return () -> {
            try (ContextSnapshot.Scope ignored = snapshot.setThreadLocals()) {
                return task.call();
            }
        };
    }

    private static Callable<Object> withMdc(Callable<Object> task) {
        Map<String, String> owners = MDC.getCopyOfContextMap();
        if (owners == null || owners.isEmpty()) {
            return task;
        }
        return () -> {
            Map<String, String> before = MDC.getCopyOfContextMap(); // a compute thread's, normally none
            MDC.setContextMap(owners);
            try {
                return task.call();
            } finally {
                if (before == null) {
                    MDC.clear();
                } else {
                    MDC.setContextMap(before);
                }
            }
        };
    }

    /**
     * Runs a request's coroutine with {@link LocaleContextHolder} giving the request's locale (its
     * {@code Accept-Language}, or the application's {@code LocaleContextResolver}), as Spring MVC does for blocking
     * code ({@code MessageSource} lookups); resolved only when asked for.
     */
    public static Runnable withRequestLocale(ServerWebExchange exchange, Runnable task) {
        if (!ThreadContexts.LOCALE) {
            return task;
        }
        return () ->
                ThreadContexts.Locale.runWith(() -> exchange.getLocaleContext().getLocale(), task);
    }

    private static Callable<Object> withLocale(Callable<Object> task) {
        LocaleContext owners = LocaleContextHolder.getLocaleContext();
        if (owners == null) {
            return task;
        }
        return () -> ThreadContexts.Locale.callWith(owners, task);
    }

    /** Apart, so that its classes load only with Spring Security there. */
    private static final class Security {

        static Callable<Object> carry(Callable<Object> task) {
            SecurityContext owners = ThreadContexts.Security.authenticatedOrNull();
            if (owners == null) {
                return task; // an empty context: what a subtask would find anyway
            }
            return () -> ThreadContexts.Security.callWith(owners, task);
        }
    }
}
