/**
 * Spring's {@code ClientHttpRequestFactory} over {@link io.cosched.http.client.LoopHttpClient}, for
 * {@code RestClient} and {@code RestTemplate}: a translation of types, nothing more.
 */
@NullMarked
package io.cosched.spring.http.client;

import org.jspecify.annotations.NullMarked;
