package io.cosched;

import java.time.Duration;
import java.util.concurrent.Callable;
import org.jspecify.annotations.Nullable;

/**
 * What a framework adds to the {@link TaskScope}s opened on a scheduler's coroutines: the time the owner has left,
 * which a scope opened without a timeout of its own takes as its deadline when the owner has no
 * {@link Coroutine#deadline()}, and the context a subtask carries from its owner (logging context, the current trace
 * span, the security context). Set once, on the scheduler's builder
 * ({@link IOManager.Builder#scopeHook}); the cosched Spring Boot starter sets one for requests. A scope opened
 * outside any coroutine uses the hook of the IOManager {@link Coroutines#go} would use.
 *
 * <p>Both methods run in the owner, on the scope's hot path: they should take microseconds.
 */
public interface ScopeHook {

    /** The hook of a scheduler that was given none: no deadline, no context. */
    ScopeHook NONE = new ScopeHook() {};

    /**
     * The time the calling code has left (a request's remaining timeout, say), or null when it has no deadline.
     * Called by the owner as a scope without a timeout of its own opens, unless the owner has a
     * {@link Coroutine#deadline()} (which the scope takes instead, without a timer); the scope times itself out after
     * what this returns, as after a timeout of its own; zero or less times it out at once. Setting the owner's
     * deadline is the better way: one deadline, one timer, the one that interrupts the owner.
     */
    default @Nullable Duration remainingTime() {
        return null;
    }

    /**
     * The subtask as its fork should run it: called by the owner at each {@link TaskScope#fork}, so it can capture
     * the owner's context there and set it around {@code task} in the fork (and clear it after). What
     * {@code task} throws must come out of the returned callable unchanged: it is the subtask's outcome.
     *
     * @param scope the scope's name ({@link TaskScope.Config#name()})
     */
    default Callable<Object> decorate(String scope, Callable<Object> task) {
        return task;
    }
}
