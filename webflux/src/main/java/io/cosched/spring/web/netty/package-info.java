/**
 * Reactor Netty's resources on cosched's loops: the server's and clients' event loops, connection pools per
 * loop, Reactor Netty's global HTTP resources, and the server's connection counts. Depends on core alone.
 */
@NullMarked
package io.cosched.spring.web.netty;

import org.jspecify.annotations.NullMarked;
