/**
 * A blocking face for Netty channels on the loops, for clients built on Netty (cosched's HTTP client,
 * JDBC's and Redis's adapters, an application's own): {@link io.cosched.netty.NettyInbox} queues what a
 * channel reads for one parked reader, {@link io.cosched.netty.NettyBlocking} connects and waits for
 * Netty futures; {@link io.cosched.netty.LoopProgressHandler} shows a server's reads to the stall
 * watchdog. API. "Channel" here is always Netty's, never {@link io.cosched.Channel}.
 */
@NullMarked
package io.cosched.netty;

import org.jspecify.annotations.NullMarked;
