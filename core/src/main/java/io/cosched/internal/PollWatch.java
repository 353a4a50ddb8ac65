package io.cosched.internal;

import io.netty.channel.IoHandle;
import io.netty.channel.IoHandler;
import io.netty.channel.IoHandlerContext;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.IoOps;
import io.netty.channel.IoRegistration;
import io.netty.util.concurrent.ThreadAwareExecutor;
import java.util.ArrayList;
import org.jspecify.annotations.Nullable;

/**
 * A loop's Netty I/O handler (epoll, NIO), telling its carrier when the loop waits in its poll: from the handler's
 * last question before the wait, whether it may block ({@link IoHandlerContext#canBlock()}, answered yes), until the
 * poll returns. So the stall watchdog knows an idle loop without pinging it, and can rest while every loop is idle.
 *
 * <p>Where the poll ends: Netty's handlers ask their context {@link IoHandlerContext#shouldReportActiveIoTime()}
 * once the wait has returned with ready I/O and before they handle it (Netty 4.2's epoll and NIO handlers); a turn
 * that found nothing ends with {@link #run} itself. Channel handlers running on ready I/O are therefore never taken
 * for an idle loop, and a loop stuck in one is found as before ({@code StallWatchdogTest} holds Netty to this).
 *
 * <p>It also runs what a drain of the carrier's queue left at its batch ({@link LoopCarrier#BATCH}) right after the
 * I/O, and keeps the poll from waiting while such a rest is due. With epoll it hands out registrations whose
 * changes made on the loop wait for its next poll ({@link DeferredOps}), applied at the top of each turn.
 */
final class PollWatch implements IoHandler, DeferredOps.Loop {

    private final LoopCarrier carrier;
    private final IoHandler delegate;
    private final @Nullable IoOps deferredChanges; // null: registrations as the handler makes them
    private final ArrayList<DeferredOps> deferred =
            new ArrayList<>(); // changes for the next poll; the loop's thread only

    @SuppressWarnings("NullAway.Init") // set at the top of every turn, before the handler can use the context
    private IoHandlerContext loop; // the loop's context, the same object every turn; the loop's thread only

    private final IoHandlerContext watched = new IoHandlerContext() {
        @Override
        public boolean canBlock() {
            boolean canBlock = !carrier.drainsAfterIo() && loop.canBlock();
            if (canBlock) {
                carrier.enterPoll(); // asked right before the wait: nothing but the wait follows a yes
            }
            return canBlock;
        }

        @Override
        public long delayNanos(long currentTimeNanos) {
            return loop.delayNanos(currentTimeNanos);
        }

        @Override
        public long deadlineNanos() {
            return loop.deadlineNanos();
        }

        @Override
        public boolean shouldReportActiveIoTime() {
            carrier.leavePoll(); // the wait returned with I/O ready: handling it is work
            return loop.shouldReportActiveIoTime();
        }

        @Override
        public void reportActiveIoTime(long activeNanos) {
            loop.reportActiveIoTime(activeNanos);
        }
    };

    private PollWatch(LoopCarrier carrier, IoHandler delegate, @Nullable IoOps deferredChanges) {
        this.carrier = carrier;
        this.delegate = delegate;
        this.deferredChanges = deferredChanges;
    }

    /**
     * Netty's factory for {@code carrier}'s loop, its handlers watched; with {@code deferredChanges} (the transport's
     * "no interest"), channels' changes of interest wait for the next poll.
     */
    static IoHandlerFactory factory(LoopCarrier carrier, IoHandlerFactory netty, @Nullable IoOps deferredChanges) {
        return new IoHandlerFactory() {
            @Override
            public IoHandler newHandler(ThreadAwareExecutor executor) {
                return new PollWatch(carrier, netty.newHandler(executor), deferredChanges);
            }

            @Override
            public boolean isChangingThreadSupported() {
                return netty.isChangingThreadSupported();
            }
        };
    }

    /** The class of the handler watched, for {@code IoEventLoop.isIoType}. */
    Class<? extends IoHandler> watchedType() {
        return delegate.getClass();
    }

    @Override
    public boolean onLoop() {
        return carrier.isCurrent();
    }

    @Override
    public void deferred(DeferredOps ops) {
        deferred.add(ops);
    }

    /** Tells epoll what changed since the last poll, right before the next. */
    private void applyDeferred() {
        // by index: a change made while applying (a refused one closes its channel) is applied in the same pass
        for (int i = 0; i < deferred.size(); i++) {
            deferred.get(i).apply();
        }
        deferred.clear();
    }

    @Override
    public int run(IoHandlerContext context) {
        loop = context;
        applyDeferred();
        int handled;
        try {
            handled = delegate.run(watched);
        } finally {
            carrier.leavePoll(); // a turn that found nothing ready; a field read when the poll ended already
        }
        carrier.afterIo(); // the rest of a drain cut at its batch, now that the ready I/O went first
        return handled;
    }

    @Override
    public void initialize() {
        delegate.initialize();
    }

    @Override
    public void prepareToDestroy() {
        delegate.prepareToDestroy();
    }

    @Override
    public void destroy() {
        delegate.destroy();
    }

    @Override
    public IoRegistration register(IoHandle handle) throws Exception {
        IoRegistration registration = delegate.register(handle);
        return deferredChanges == null ? registration : new DeferredOps(registration, handle, this, deferredChanges);
    }

    @Override
    public void wakeup() {
        delegate.wakeup();
    }

    @Override
    public boolean isCompatible(Class<? extends IoHandle> handleType) {
        return delegate.isCompatible(handleType);
    }
}
