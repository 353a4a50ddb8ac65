package io.cosched.spring.boot.autoconfigure.web;

import io.cosched.Coroutine;
import io.cosched.Coroutines;
import io.cosched.IOManager;
import io.cosched.spring.web.CoschedWebStats;
import org.jspecify.annotations.Nullable;
import org.springframework.core.task.AsyncTaskExecutor;
import reactor.util.context.Context;

import java.time.Duration;

/**
 * The executor Spring runs blocking handlers on: every hand-off becomes a coroutine on the
 * IOManager loop of the calling thread (the connection's loop), unless the caller already is a
 * coroutine of the IOManager, in which case the task runs inline. Spring calls an executor twice
 * per request (around the whole handling, and again before invoking the handler); the second call
 * usually comes from the first coroutine, so a request costs one coroutine, not two.
 *
 * <p>Not a bean: registered as an {@code Executor} it would replace Spring Boot's
 * {@code applicationTaskExecutor} and capture {@code @Async}.
 */
final class CoroutineHandlerExecutor implements AsyncTaskExecutor {

    private final IOManager io;
    private final CoschedWebStats stats;
    private final @Nullable Duration timeout;
    private final int maxInFlight;
    private final ContextRestorer restorer;

    CoroutineHandlerExecutor(IOManager io, CoschedWebStats stats, @Nullable Duration timeout,
            @Nullable Integer maxInFlight, ContextRestorer restorer) {
        this.io = io;
        this.stats = stats;
        this.timeout = timeout;
        this.maxInFlight = maxInFlight == null ? Integer.MAX_VALUE : maxInFlight;
        this.restorer = restorer;
    }

    @Override
    public void execute(Runnable task) {
        Context context = RequestContextHook.take();
        // cheapest test first: the first hand-off comes from a loop thread, which is no coroutine
        if (Coroutines.current().isPresent() && io.isCurrent()) {
            stats.countInlined();
            task.run(); // already the request's coroutine, on its loop: a second coroutine would only cost
            return;
        }
        RequestScope scope = context == null ? null : context.getOrDefault(RequestScope.KEY, null);
        Runnable body = context == null ? task : restorer.wrap(context, task);
        if (scope != null) {
            if (!scope.admit(maxInFlight, timeout, io.timers())) {
                throw shed();
            }
            start(() -> {
                Coroutine<?> self = Coroutines.current().orElseThrow();
                scope.attach(self);
                try {
                    body.run();
                } finally {
                    scope.detach(self);
                }
            });
        } else {
            // a hand-off outside a request cosched saw arrive: count it on its own
            if (!stats.tryEnter(maxInFlight)) {
                throw shed();
            }
            try {
                start(() -> {
                    try {
                        body.run();
                    } finally {
                        stats.exit();
                    }
                });
            } catch (RuntimeException notStarted) {
                stats.exit(); // e.g. the IOManager is stopping: the slot was never used
                throw notStarted;
            }
        }
    }

    private CoroutineRejectedException shed() {
        stats.countShed();
        return new CoroutineRejectedException(maxInFlight);
    }

    private void start(Runnable coroutine) {
        stats.countCoroutine();
        io.execute(coroutine); // from a loop thread: on that loop; else on the least loaded one
    }
}
