/**
 * Shedding coroutine requests over the in-flight limit: before WebFlux, in each connection's pipeline
 * ({@link io.cosched.spring.web.shedding.EarlyShedding}), and the readiness verdict a load balancer reads
 * ({@link io.cosched.spring.web.shedding.SheddingReadiness}). Uses the request path's admission, never the other
 * way round.
 */
@NullMarked
package io.cosched.spring.web.shedding;

import org.jspecify.annotations.NullMarked;
