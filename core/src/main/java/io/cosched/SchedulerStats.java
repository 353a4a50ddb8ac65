package io.cosched;

/**
 * The numbers a user watches for one scheduler. Exact when the scheduler is quiet; while it is
 * busy each number is read without stopping anything, so they may disagree by the few coroutines
 * that changed state during the read.
 *
 * @param name            the scheduler's name
 * @param type            {@link Type#POOL} ({@link PoolScheduler}) or {@link Type#IO} ({@link IOManager});
 *                        an IOManager's transport is {@link IOManager#transport()}
 * @param mode            {@link Mode#CARRIER} (coroutines run on this scheduler's carriers) or
 *                        {@link Mode#FALLBACK} (ordinary virtual threads; the JVM flag is missing)
 * @param threads         carriers
 * @param activeThreads   carriers running a coroutine step or a timer task right now
 * @param idleThreads     {@code threads - activeThreads}
 * @param queueDepth      coroutine steps and tasks waiting for a carrier
 * @param coroutines      coroutines started and not yet finished
 * @param ready           of those, queued for a carrier
 * @param running         of those, on a carrier now
 * @param waiting         of those, parked (I/O, locks, await, suspend)
 * @param sleeping        of those, in {@link Coroutines#sleep}
 * @param timersPending   timers that will still fire (IOManager), 0 for a PoolScheduler
 * @param completedTasks  coroutines finished since start (normally, failed or cancelled)
 * @param localWakeups    resumes of parked coroutines since start that their own carrier's thread asked
 *                        for: the loop that read the bytes they waited for, a timer of that loop, a
 *                        coroutine on the same carrier (carrier mode, coroutines homed on one carrier)
 * @param remoteWakeups   resumes asked for by any other thread (a JDK poller or unparker thread, a pool
 *                        thread, another loop): each costs a thread hop, and for a loop an eventfd write;
 *                        monitor hand-backs not counted
 * @param monitorWakeups  resumes of coroutines that blocked entering a {@code synchronized} block or method held
 *                        by another thread or coroutine, handed back by the JDK's {@code VirtualThread-unblocker}
 *                        thread once it was free (JDK 24 on; on JDK 21 such a coroutine pins its carrier instead):
 *                        a remote wake-up too, but one that says nothing about where I/O resumes
 * @param stalls          stalls detected since start: times a carrier was seen stuck in one task past
 *                        the stall threshold, burning CPU or blocked (0 when the watchdog is off)
 * @param warmUpStalls    stalls of the JVM warming up, not counted in {@code stalls}: at the threshold the stuck
 *                        code loaded classes or the JIT was compiling, and it ended within the warm-up limit
 *                        ({@link IOManager.Builder#stallWarmUpLimit}); counted when it ends
 * @param starvations     times a carrier sat a stall threshold in one task mostly waiting for a CPU the
 *                        OS did not give it (an overloaded host or CPU-throttled container): not stalls
 * @param stalledThreads  carriers stuck right now
 * @param forks           subtasks forked since start by {@link TaskScope}s whose owners are this scheduler's
 *                        coroutines
 * @param forksFailed     of those, ended by throwing (not counting cancelled ones)
 * @param forksCancelled  of those, interrupted or never run because their scope was cancelled: a sibling failed
 *                        or won, the deadline passed, the owner was interrupted, or the scope closed early
 * @param state           see {@link State}
 */
public record SchedulerStats(
        String name,
        Type type,
        Mode mode,
        int threads,
        int activeThreads,
        int idleThreads,
        long queueDepth,
        long coroutines,
        long ready,
        long running,
        long waiting,
        long sleeping,
        long timersPending,
        long completedTasks,
        long localWakeups,
        long remoteWakeups,
        long monitorWakeups,
        long stalls,
        long warmUpStalls,
        long starvations,
        int stalledThreads,
        long forks,
        long forksFailed,
        long forksCancelled,
        State state) {

    /** Which kind of scheduler the numbers are of. */
    public enum Type {
        /** A {@link PoolScheduler}: platform carrier threads. */
        POOL,
        /** An {@link IOManager}: Netty event loops as carriers. */
        IO
    }

    /** Where a scheduler's coroutines run; decided once per JVM. */
    public enum Mode {
        /** On the scheduler's own carriers (the JVM has {@code --add-opens java.base/java.lang}). */
        CARRIER,
        /** As ordinary virtual threads on the JDK's scheduler: the flag is missing; everything still works, slower. */
        FALLBACK
    }

    /** A scheduler's life. */
    public enum State {
        /** Built, not started: it accepts no coroutine yet. */
        NEW,
        /** Started: it accepts coroutines. */
        RUNNING,
        /** A stop began: it accepts no new coroutine and waits for the live ones. */
        STOPPING,
        /** Stopped: its carriers are gone. */
        STOPPED,
        /** Should be running, but a carrier thread died or someone shut its event loop down. */
        FAILED
    }
}
