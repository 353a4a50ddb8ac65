package io.cosched.netty;

import io.cosched.internal.Carrier;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;

/**
 * Counts every read of a channel on an IOManager's loop as progress of that loop for the stall
 * watchdog. Without it the watchdog sees a loop's progress only in the tasks cosched runs (coroutine
 * steps, timers, its pings), so a loop that spends longer than the threshold in one batch of socket
 * reads, handling many short requests in reactive code on a slow or crowded machine, looks stuck
 * although it moves. With it, only a loop that stays inside one read (a handler that blocks or spins)
 * is. Put it first in the pipeline of the server's child channels; the Spring Boot starter does this
 * for the WebFlux server. Stateless and shared; off an IOManager loop it does nothing.
 */
@ChannelHandler.Sharable
public final class LoopProgressHandler extends ChannelInboundHandlerAdapter {

    /** The one instance. */
    public static final LoopProgressHandler INSTANCE = new LoopProgressHandler();

    private LoopProgressHandler() {}

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        Carrier.countProgressOfCurrentThread();
        ctx.fireChannelRead(msg);
    }
}
