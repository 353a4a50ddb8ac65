/**
 * I/O on the loops: connections opened as Netty channels on an IOManager's event loops, with a
 * blocking face for code in coroutines, so that the loop thread that reads the bytes is the thread
 * that resumes the waiting coroutine. {@link io.cosched.net.LoopSocketFactory} for JDBC drivers;
 * {@link io.cosched.net.ChannelInbox} and {@link io.cosched.net.LoopChannels} for clients built on Netty.
 */
@NullMarked
package io.cosched.net;

import org.jspecify.annotations.NullMarked;
