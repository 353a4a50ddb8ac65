/**
 * Spring Data Redis on cosched's event loops: a Lettuce connection factory that gives each coroutine a
 * connection of its own loop.
 */
@NullMarked
package io.cosched.spring.data.redis;

import org.jspecify.annotations.NullMarked;
