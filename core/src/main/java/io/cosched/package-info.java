/**
 * cosched's public runtime API: schedulers ({@link io.cosched.PoolScheduler}, {@link io.cosched.IOManager}),
 * coroutines, timers, channels and the {@link io.cosched.Coroutines} helpers for code running inside a coroutine.
 */
@NullMarked
package io.cosched;

import org.jspecify.annotations.NullMarked;
