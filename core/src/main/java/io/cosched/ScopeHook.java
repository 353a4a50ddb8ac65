package io.cosched;

import java.util.concurrent.Callable;

/**
 * What a framework adds to the {@link TaskScope}s opened on a scheduler's coroutines: the context a subtask carries
 * from its owner (logging context, the current trace span, the security context). Set once, on the scheduler's
 * builder ({@link IOManager.Builder#scopeHook}); the cosched Spring Boot starter sets one for requests. A scope opened
 * outside any coroutine uses the hook of the IOManager {@link Coroutines#go} would use. A scope's deadline is not the
 * hook's: it is the owner's {@link Coroutine#deadline()}, set by whoever will interrupt the owner by then.
 *
 * <p>It runs in the owner, on the scope's hot path: it should take microseconds.
 */
public interface ScopeHook {

    /** The hook of a scheduler that was given none: no context. */
    ScopeHook NONE = new ScopeHook() {};

    /**
     * The subtask as it should run: called by the owner at each {@link TaskScope#fork}, so it can capture
     * the owner's context there and set it around {@code task} in the subtask (and clear it after). What
     * {@code task} throws must come out of the returned callable unchanged: it is the subtask's outcome.
     *
     * @param scope the scope's name ({@link TaskScope.Config#name()})
     */
    default Callable<Object> decorate(String scope, Callable<Object> task) {
        return task;
    }
}
