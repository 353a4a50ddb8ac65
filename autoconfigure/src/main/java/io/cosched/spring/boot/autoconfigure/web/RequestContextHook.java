package io.cosched.spring.boot.autoconfigure.web;

import org.jspecify.annotations.Nullable;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.Hooks;
import reactor.core.scheduler.Schedulers;
import reactor.util.context.Context;

/**
 * Finds the request behind a task Spring hands to the coroutine executor.
 *
 * <p>Spring wraps the executor in {@code Schedulers.fromExecutor} and calls it at
 * {@code subscribeOn} (around the whole handling) and at {@code publishOn} (before invoking the
 * handler, from whichever thread resolved the last argument: for a request body, a loop thread
 * well after the request arrived). The task the executor receives is Reactor's wrapper and says
 * nothing about the request. Reactor's schedule hook, though, runs on the same thread just before,
 * with the operator itself: a {@link CoreSubscriber} whose {@link CoreSubscriber#currentContext()}
 * holds what {@link CoschedWebFilter} put there. The hook leaves that context in a thread-local
 * for the executor to take.
 *
 * <p>The hook runs for every task any Reactor scheduler takes, so it does little: a type check, a
 * context lookup, and a thread-local write only when the value changes.
 */
final class RequestContextHook {

    static final String HOOK_KEY = "io.cosched.request-context";

    private static final ThreadLocal<@Nullable Context> CAPTURED = new ThreadLocal<>();
    private static boolean installed;

    private RequestContextHook() {
    }

    /** Installs the hook once per JVM, ahead of Reactor's own context-propagation hook. */
    static synchronized void install() {
        if (installed) {
            return;
        }
        // Hooks compose in registration order; Reactor's automatic context propagation wraps the
        // task, after which ours could no longer see the operator. Make sure ours comes first.
        boolean automatic = Hooks.isAutomaticContextPropagationEnabled();
        if (automatic) {
            Hooks.disableAutomaticContextPropagation();
        }
        Schedulers.onScheduleHook(HOOK_KEY, RequestContextHook::capture);
        if (automatic) {
            Hooks.enableAutomaticContextPropagation();
        }
        installed = true;
    }

    private static Runnable capture(Runnable task) {
        Context found = null;
        if (task instanceof CoreSubscriber<?> subscriber) {
            Context context = subscriber.currentContext();
            if (context.hasKey(RequestScope.KEY)) {
                found = context;
            }
        }
        // Always overwrite: a stale context from a task for another scheduler must not be taken
        // for the next task of ours. Skip the write when nothing changes.
        if (CAPTURED.get() != found) {
            CAPTURED.set(found);
        }
        return task;
    }

    /** The context the hook saw for the task being scheduled on this thread right now, once. */
    static @Nullable Context take() {
        Context context = CAPTURED.get();
        if (context != null) {
            CAPTURED.remove();
        }
        return context;
    }
}
