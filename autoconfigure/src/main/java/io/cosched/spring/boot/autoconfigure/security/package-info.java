/**
 * Wiring for Spring Security in a reactive application: where the password check runs. The security
 * context inside coroutine handlers needs no wiring (the request path restores it).
 */
@NullMarked
package io.cosched.spring.boot.autoconfigure.security;

import org.jspecify.annotations.NullMarked;
