/**
 * Context propagation, written once for a request and its forks: a request's Reactor context into its coroutine
 * ({@link io.cosched.spring.web.context.ContextRestorer}), an owner's thread-local context into its task scopes'
 * subtasks ({@link io.cosched.spring.web.context.RequestScopes}), and which libraries are there and how each
 * context is set and cleared, in one place for both.
 */
@NullMarked
package io.cosched.spring.web.context;

import org.jspecify.annotations.NullMarked;
