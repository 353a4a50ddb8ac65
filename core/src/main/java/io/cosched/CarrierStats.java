package io.cosched;

/**
 * One carrier of a scheduler, as {@link Scheduler#carrierStats()} reports it.
 *
 * @param index      0-based carrier index
 * @param thread     the carrier thread's name, {@code <scheduler>-<index>}
 * @param state      see {@link State}
 * @param queueDepth coroutine steps and tasks waiting for this carrier
 * @param coroutines coroutines homed on this carrier and not finished (for a {@link PoolScheduler},
 *                   those bound to it with {@link Scheduler#spawnOn})
 * @param localWakeups  resumes of its coroutines that this carrier's own thread asked for
 *                      (see {@link SchedulerStats#localWakeups()})
 * @param remoteWakeups resumes of its coroutines that another thread asked for, monitor hand-backs aside
 * @param monitorWakeups resumes of its coroutines blocked entering a {@code synchronized} block or method, handed
 *                       back by the JDK once the monitor was free (see {@link SchedulerStats#monitorWakeups()})
 */
public record CarrierStats(
        int index,
        String thread,
        State state,
        long queueDepth,
        int coroutines,
        long localWakeups,
        long remoteWakeups,
        long monitorWakeups) {

    /** What a carrier is doing. */
    public enum State {
        /** Waiting for work (parked, or in {@code epoll_wait} for a loop). */
        IDLE,
        /** Running a coroutine step or a timer task. */
        BUSY,
        /** Stuck in one task past the stall threshold; its work spills to other carriers. */
        STALLED
    }
}
