/**
 * Blocking sockets on the loops, for code that speaks {@code java.net.Socket} (JDBC drivers):
 * {@link io.cosched.net.LoopSocketFactory} opens each socket as a Netty channel on an IOManager's event
 * loop, so that the loop thread that reads the bytes is the thread that resumes the waiting coroutine.
 * API. Clients built on Netty itself use {@code io.cosched.netty}.
 */
@NullMarked
package io.cosched.net;

import org.jspecify.annotations.NullMarked;
