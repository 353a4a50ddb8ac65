package io.cosched.spring.web.server;

import io.cosched.Coroutines;
import org.springframework.core.task.AsyncTaskExecutor;

/**
 * The executor Spring's own blocking execution hands coroutine handlers to. A request that
 * {@link CoroutineHandlerAdapter} runs is already in its coroutine when Spring calls this (around the
 * handling, and before invoking the handler), so the task runs inline. What reaches it from
 * elsewhere becomes a coroutine of its own on the caller's loop, holding an in-flight slot while it
 * runs: a hand-off of an application that brings its own {@code WebFluxRegistrations} (so cosched's
 * adapter is not in use), or an argument that completed on a thread cosched does not route into the
 * request's coroutine. Such a coroutine has no deadline and no cancellation; docs/web.md says so.
 *
 * <p>Not a bean: registered as an {@code Executor} it would replace Spring Boot's
 * {@code applicationTaskExecutor} and capture {@code @Async}.
 */
final class CoroutineHandlerExecutor implements AsyncTaskExecutor {

    private final RequestServices services;

    CoroutineHandlerExecutor(RequestServices services) {
        this.services = services;
    }

    @Override
    public void execute(Runnable task) {
        if (Coroutines.current().isPresent() && services.io().isCurrent()) {
            services.counts().countInlined();
            task.run(); // already a coroutine of the IOManager: a second one would only cost
            return;
        }
        services.admission().execute(task);
    }
}
