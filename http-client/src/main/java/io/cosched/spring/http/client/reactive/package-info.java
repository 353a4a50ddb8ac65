/**
 * Spring's reactive {@code ClientHttpConnector} over {@link io.cosched.http.client.LoopHttpClient}'s
 * asynchronous exchanges, for a {@code WebClient} called from coroutines; any other caller goes to the
 * connector it wraps.
 */
@NullMarked
package io.cosched.spring.http.client.reactive;

import org.jspecify.annotations.NullMarked;
