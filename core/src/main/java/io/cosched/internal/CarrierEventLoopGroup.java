package io.cosched.internal;

import io.netty.channel.IoEventLoop;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.SingleThreadIoEventLoop;

import java.util.concurrent.Executor;

/**
 * Netty's multi-thread I/O group whose loops run on cosched carrier threads: loop {@code i}'s
 * thread is named {@code <name>-i} and knows its {@link LoopCarrier}, whatever order the loops
 * start in. New channels registered with the group go to a loop picked by a {@link LoopChooser}.
 */
final class CarrierEventLoopGroup extends MultiThreadIoEventLoopGroup {

    /** Hands out carriers in the order Netty creates the children (index order). */
    private static final class Children {
        final LoopCarrier[] carriers;
        int next;

        Children(LoopCarrier[] carriers) {
            this.carriers = carriers;
        }
    }

    CarrierEventLoopGroup(LoopCarrier[] carriers, IoHandlerFactory ioHandlerFactory, long stallThresholdNanos, Ticker ticker) {
        super(carriers.length, (Executor) null, ioHandlerFactory,
                executors -> new LoopChooser(carriers, stallThresholdNanos, ticker), new Children(carriers));
    }

    @Override
    protected IoEventLoop newChild(Executor ignored, IoHandlerFactory ioHandlerFactory, Object... args) {
        Children children = (Children) args[0];
        LoopCarrier carrier = children.carriers[children.next++];
        IoEventLoop loop = new SingleThreadIoEventLoop(this, carrier::startThread, ioHandlerFactory);
        carrier.bind(loop);
        return loop;
    }
}
