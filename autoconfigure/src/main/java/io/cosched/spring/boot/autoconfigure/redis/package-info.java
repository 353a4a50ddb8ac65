/**
 * Spring Data Redis with Lettuce on cosched's event loops: Spring Boot's connection factory becomes one
 * that gives each coroutine a connection of its own loop.
 */
@NullMarked
package io.cosched.spring.boot.autoconfigure.redis;

import org.jspecify.annotations.NullMarked;
