/**
 * cosched's request handling in WebFlux: each coroutine request's admission, deadline, coroutine
 * and cancellation, with {@link io.cosched.spring.web.server.CoroutineRequests} as its one entry point.
 */
@NullMarked
package io.cosched.spring.web.server;

import org.jspecify.annotations.NullMarked;
