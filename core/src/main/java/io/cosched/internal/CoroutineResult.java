package io.cosched.internal;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * A coroutine's result as a {@link CompletableFuture}: completed only by the coroutine, cancellable by
 * users (which cancels the coroutine); a timeout or copy made from it is a new future.
 */
final class CoroutineResult<T> extends CompletableFuture<T> {
    private final CoroutineImpl<T> owner;

    CoroutineResult(CoroutineImpl<T> owner) {
        this.owner = owner;
    }

    void set(@Nullable T value) {
        super.complete(value);
    }

    void fail(Throwable e) {
        super.completeExceptionally(e);
    }

    void cancelled() {
        super.cancel(false);
    }

    @Override
    public boolean complete(T value) {
        throw setByTheCoroutine();
    }

    @Override
    public boolean completeExceptionally(Throwable ex) {
        throw setByTheCoroutine();
    }

    @Override
    public void obtrudeValue(T value) {
        throw setByTheCoroutine();
    }

    @Override
    public void obtrudeException(Throwable ex) {
        throw setByTheCoroutine();
    }

    @Override
    public boolean cancel(boolean mayInterruptIfRunning) {
        return owner.cancel();
    }

    @Override
    public CompletableFuture<T> completeOnTimeout(T value, long timeout, TimeUnit unit) {
        return copy().completeOnTimeout(value, timeout, unit);
    }

    @Override
    public CompletableFuture<T> orTimeout(long timeout, TimeUnit unit) {
        return copy().orTimeout(timeout, unit);
    }

    @Override
    public <U> CompletableFuture<U> newIncompleteFuture() {
        return new CompletableFuture<>();
    }

    private static UnsupportedOperationException setByTheCoroutine() {
        return new UnsupportedOperationException("a coroutine's result is set by the coroutine itself");
    }
}
