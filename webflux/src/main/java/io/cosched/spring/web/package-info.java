/**
 * What WebFlux applications use from cosched: {@link io.cosched.spring.web.RunAsCoroutine} for
 * annotated handlers, {@link io.cosched.spring.web.CoroutineHandlers} for functional endpoints, the
 * streaming types ({@link io.cosched.spring.web.MultipartStream}, {@link io.cosched.spring.web.StreamingResponseBody},
 * {@link io.cosched.spring.web.EventStream}), and {@link io.cosched.spring.web.CoschedWebStats} for the numbers.
 */
@NullMarked
package io.cosched.spring.web;

import org.jspecify.annotations.NullMarked;
