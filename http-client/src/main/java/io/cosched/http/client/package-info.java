/**
 * A blocking HTTP/1.1 client whose connections are Netty channels on the calling coroutine's own
 * event loop, so that the loop that reads a response resumes the coroutine that waits for it. No Spring.
 */
@NullMarked
package io.cosched.http.client;

import org.jspecify.annotations.NullMarked;
