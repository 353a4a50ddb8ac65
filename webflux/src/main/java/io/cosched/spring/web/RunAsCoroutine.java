package io.cosched.spring.web;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Runs a blocking WebFlux handler method as a coroutine on the event loop that read the request.
 * On a class, it applies to every handler method of the class. On a method that returns a reactive
 * type ({@code Mono}, {@code Flux}, any {@code Publisher}), the method's body runs in the coroutine and
 * WebFlux subscribes to what it returns as usual, on the loop: what the publisher does later must not
 * block (a blocking producer returns an {@link EventStream} instead).
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
 * annotation is not needed; with {@code off} it has no effect. A handler that streams (an
 * {@code InputStream} or {@link MultipartStream} argument, a {@link StreamingResponseBody} or
 * {@link EventStream} answer) runs as a coroutine without it.
 */
@Target({ElementType.METHOD, ElementType.TYPE})
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface RunAsCoroutine {}
