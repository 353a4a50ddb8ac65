package io.cosched.internal;

import io.netty.channel.IoEventLoop;
import io.netty.channel.IoHandler;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.IoOps;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.SingleThreadIoEventLoop;
import io.netty.util.concurrent.RejectedExecutionHandlers;
import java.util.AbstractQueue;
import java.util.Iterator;
import java.util.Queue;
import java.util.concurrent.Executor;
import org.jspecify.annotations.Nullable;

/**
 * Netty's multi-thread I/O group whose loops run on cosched carrier threads: loop {@code i}'s
 * thread is named {@code <name>-i} and knows its {@link LoopCarrier}, whatever order the loops
 * start in. New channels registered with the group go to a loop picked by a {@link LoopChooser}.
 */
final class CarrierEventLoopGroup extends MultiThreadIoEventLoopGroup {

    /** Hands out carriers in the order Netty creates the children (index order). */
    private static final class Children {
        final LoopCarrier[] carriers;
        final @Nullable IoOps deferredChanges;
        int next;

        Children(LoopCarrier[] carriers, @Nullable IoOps deferredChanges) {
            this.carriers = carriers;
            this.deferredChanges = deferredChanges;
        }
    }

    /** {@code deferredChanges}: see {@link IOTransport#deferredChanges()}. */
    CarrierEventLoopGroup(
            LoopCarrier[] carriers,
            IoHandlerFactory ioHandlerFactory,
            @Nullable IoOps deferredChanges,
            long stallThresholdNanos,
            Ticker ticker) {
        super(
                carriers.length,
                (Executor) null,
                ioHandlerFactory,
                executors -> new LoopChooser(carriers, stallThresholdNanos, ticker),
                new Children(carriers, deferredChanges));
    }

    @Override
    protected IoEventLoop newChild(Executor ignored, IoHandlerFactory ioHandlerFactory, Object... args) {
        Children children = (Children) args[0];
        LoopCarrier carrier = children.carriers[children.next++];
        IoEventLoop loop =
                new CarrierLoop(this, carrier, PollWatch.factory(carrier, ioHandlerFactory, children.deferredChanges));
        carrier.bind(loop);
        return loop;
    }

    /** A Netty I/O event loop whose every task taken from its queue counts as the carrier's progress. */
    private static final class CarrierLoop extends SingleThreadIoEventLoop {
        CarrierLoop(CarrierEventLoopGroup group, LoopCarrier carrier, IoHandlerFactory ioHandlerFactory) {
            super(
                    group,
                    carrier::startThread,
                    ioHandlerFactory,
                    new ProgressQueue(carrier, newTaskQueue0(Integer.MAX_VALUE)),
                    newTaskQueue0(Integer.MAX_VALUE),
                    RejectedExecutionHandlers.reject());
        }

        /** Whether the loop's I/O is of {@code handlerType} (Netty's epoll, say): the watched handler's type. */
        @Override
        public boolean isIoType(Class<? extends IoHandler> handlerType) {
            return ioHandler() instanceof PollWatch watch
                    ? watch.watchedType().equals(handlerType)
                    : super.isIoType(handlerType);
        }
    }

    /**
     * The loop's task queue, counting each task the loop takes as progress for the stall watchdog:
     * a loop working through a long backlog of short Netty tasks (response writes queued by
     * coroutines, say) is busy, not stuck. Only the loop's thread polls.
     */
    private static final class ProgressQueue extends AbstractQueue<Runnable> {
        private final LoopCarrier carrier;
        private final Queue<Runnable> tasks;

        ProgressQueue(LoopCarrier carrier, Queue<Runnable> tasks) {
            this.carrier = carrier;
            this.tasks = tasks;
        }

        @Override
        public boolean offer(Runnable task) {
            return tasks.offer(task);
        }

        @Override
        public Runnable poll() {
            Runnable task = tasks.poll();
            if (task != null) {
                carrier.advance();
            }
            return task;
        }

        @Override
        public Runnable peek() {
            return tasks.peek();
        }

        @Override
        public boolean isEmpty() {
            return tasks.isEmpty();
        }

        @Override
        public int size() {
            return tasks.size();
        }

        @Override
        public boolean remove(Object task) {
            return tasks.remove(task);
        }

        @Override
        public Iterator<Runnable> iterator() {
            return tasks.iterator();
        }
    }
}
