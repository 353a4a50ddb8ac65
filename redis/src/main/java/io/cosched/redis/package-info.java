/**
 * Redis on cosched's event loops, for Lettuce: the event loops a client's connections live on, taken from
 * an IOManager, one loop per client, so that the loop that reads a reply resumes the coroutine that waits
 * for it. No Spring.
 */
@NullMarked
package io.cosched.redis;

import org.jspecify.annotations.NullMarked;
