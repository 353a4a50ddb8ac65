/**
 * A blocking HTTP/1.1 client for Spring's {@code RestClient} and {@code RestTemplate} whose
 * connections are Netty channels on the calling coroutine's own event loop, so that the loop that
 * reads a response resumes the coroutine that waits for it.
 */
@NullMarked
package io.cosched.spring.http.client;

import org.jspecify.annotations.NullMarked;
