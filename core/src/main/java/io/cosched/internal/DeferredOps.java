package io.cosched.internal;

import io.netty.channel.IoHandle;
import io.netty.channel.IoOps;
import io.netty.channel.IoRegistration;
import java.io.UncheckedIOException;
import org.jspecify.annotations.Nullable;

/**
 * A channel's epoll registration whose changes made on its loop wait for the loop's next poll, so that changes
 * that cancel out cost no system call. Reactor Netty's HTTP server turns a connection's reading off as each request
 * arrives and on again once its last part is read, in the same loop turn for a bodiless request: two
 * {@code epoll_ctl} calls a request that leave the registration as it was. Only {@code epoll_wait} reads the
 * registration, so applying the last change right before it ({@link PollWatch#run}) is the same to the kernel as
 * applying each at once: a change that makes an event due is reported by that wait, as it would have been.
 *
 * <p>Not deferred: the first submission (it adds the descriptor), one that removes every interest (it deletes it),
 * and one made off the loop (applied at once, after dropping any change still waiting, so the last word wins). A
 * deferred change that epoll refuses closes the channel, as Netty's channel does when a change it makes at once fails.
 */
final class DeferredOps implements IoRegistration {

    /** The loop a registration belongs to ({@link PollWatch}). */
    interface Loop {
        /** Whether the caller runs on the loop: its thread, or a coroutine mounted on it. */
        boolean onLoop();

        /** {@code ops} has a change for the loop's next poll; called on the loop. */
        void deferred(DeferredOps ops);
    }

    private final IoRegistration delegate;
    private final IoHandle handle;
    private final Loop loop;
    private final IoOps none; // the transport's "no interest": submitted, the descriptor leaves epoll

    // guarded by this
    private @Nullable IoOps applied; // what epoll has, null until the first submission
    private @Nullable IoOps wanted; // a change waiting for the loop's next poll
    private boolean listed; // in the loop's list of registrations to apply before the poll

    DeferredOps(IoRegistration delegate, IoHandle handle, Loop loop, IoOps none) {
        this.delegate = delegate;
        this.handle = handle;
        this.loop = loop;
        this.none = none;
    }

    @Override
    public <T> T attachment() {
        return delegate.attachment();
    }

    /** Always 0: Netty's channels ignore what a submission returns. */
    @Override
    public long submit(IoOps ops) {
        synchronized (this) {
            if (applied != null && !ops.equals(none) && loop.onLoop()) {
                if (ops.equals(applied)) {
                    wanted = null; // back to what epoll has: nothing to tell it
                } else {
                    wanted = ops;
                    if (!listed) {
                        listed = true;
                        loop.deferred(this);
                    }
                }
                return 0;
            }
            wanted = null;
            applied = ops;
            delegate.submit(ops);
            return 0;
        }
    }

    /** Applies the change that waits, if any; on the loop's thread, right before it polls. */
    void apply() {
        synchronized (this) {
            listed = false;
            IoOps ops = wanted;
            if (ops == null) {
                return;
            }
            wanted = null;
            if (!delegate.isValid()) {
                return;
            }
            applied = ops;
            try {
                delegate.submit(ops);
                return;
            } catch (UncheckedIOException e) {
                Carrier.LOG.log(
                        System.Logger.Level.DEBUG, "epoll refused a channel's change of interest; closing it", e);
            }
        }
        try {
            handle.close();
        } catch (Exception e) {
            Carrier.LOG.log(System.Logger.Level.DEBUG, "closing a channel epoll refused failed", e);
        }
    }

    @Override
    public boolean isValid() {
        return delegate.isValid();
    }

    @Override
    public boolean cancel() {
        synchronized (this) {
            wanted = null;
        }
        return delegate.cancel();
    }
}
