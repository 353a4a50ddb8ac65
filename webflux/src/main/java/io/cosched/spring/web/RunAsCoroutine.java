package io.cosched.spring.web;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Runs a blocking WebFlux handler method as a coroutine on the event loop that read the request.
 * On a class, it applies to every handler method of the class. Only methods whose return type is
 * not reactive ({@code Mono}, {@code Flux}, {@code CompletableFuture}...) run as coroutines: a
 * reactive method already returns without blocking.
 *
 * <pre>{@code
 * @RunAsCoroutine
 * @GetMapping("/orders/{id}")
 * Order order(@PathVariable long id) {
 *     return jdbc.sql("select * from orders where id = ?").param(id).query(Order.class).single();
 * }
 * }</pre>
 *
 * With {@code cosched.web.mode=all} every non-reactive handler runs as a coroutine and the
 * annotation is not needed; with {@code off} it has no effect.
 */
@Target({ElementType.METHOD, ElementType.TYPE})
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface RunAsCoroutine {
}
