/**
 * cosched's machinery, not API: the carrier probe, coroutine bookkeeping, carriers and their
 * queues, the event-loop integration and the timer queue. May change in any release.
 */
@NullMarked
package io.cosched.internal;

import org.jspecify.annotations.NullMarked;
