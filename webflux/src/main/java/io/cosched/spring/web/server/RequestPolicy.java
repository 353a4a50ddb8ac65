package io.cosched.spring.web.server;

import io.cosched.spring.web.context.ContextRestorer;
import io.cosched.spring.web.stream.StreamLimits;
import java.time.Duration;
import org.jspecify.annotations.Nullable;

/**
 * How every coroutine request of one {@link CoroutineRequests} is run, fixed when it is made.
 *
 * @param timeout            how long a handler may take before it is interrupted and 503 answered, until the
 *                           request begins to stream; null for none
 * @param cancelOnDisconnect whether a request Spring cancels (the client went away) interrupts its handler
 * @param restorer           what the handler finds in its thread locals (MDC, observation, security context)
 * @param streams            the limits of a request once it streams
 */
record RequestPolicy(
        @Nullable Duration timeout, boolean cancelOnDisconnect, ContextRestorer restorer, StreamLimits streams) {}
