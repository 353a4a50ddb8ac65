/**
 * The WebFlux integration: the HTTP server on the IOManager's event loops, blocking handlers as
 * coroutines on the loop that read the request, request timeouts, load shedding and context propagation.
 */
@NullMarked
package io.cosched.spring.boot.autoconfigure.web;

import org.jspecify.annotations.NullMarked;
