/**
 * Wiring of the WebFlux integration: the HTTP server on the IOManager's event loops, and cosched's
 * request handling ({@code io.cosched.spring.web.server}) in Spring WebFlux.
 */
@NullMarked
package io.cosched.spring.boot.autoconfigure.web;

import org.jspecify.annotations.NullMarked;
