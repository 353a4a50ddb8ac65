package io.cosched.internal;

import java.util.Arrays;
import java.util.function.Consumer;

/**
 * The timers of one loop: a binary min-heap ordered by (deadline, insertion order), confined to
 * the loop's thread.
 *
 * <p>Keys live in primitive arrays next to the timer references, so sifting never dereferences a
 * timer: with a million pending timers that is the difference between a cache miss per level and
 * none. Cancels and moves are lazy: the timer forgets its heap entry ({@link TimerImpl#heapSeq}
 * no longer matches), the entry stays until it surfaces at the top or a purge drops it. So add and
 * cancel are O(1) expected, and a purge, run once stale entries outnumber live ones, keeps memory
 * bounded at about twice the live timers.
 */
public final class TimerQueue {

    private static final int INITIAL_CAPACITY = 64;
    private static final int PURGE_MIN_STALE = 1024;

    private long[] deadlines = new long[INITIAL_CAPACITY];
    private long[] seqs = new long[INITIAL_CAPACITY];
    private TimerImpl[] timers = new TimerImpl[INITIAL_CAPACITY];
    private int size;
    private int stale;
    private long nextSeq = 1;

    /** Heap entries, live and stale; for tests. */
    int entries() {
        return size;
    }

    /** Adds an entry for a pending timer at {@code deadline}; an older entry of the timer goes stale. */
    void push(TimerImpl t, long deadline) {
        if (t.heapSeq != 0) {
            stale++;
        }
        long seq = nextSeq++;
        t.heapSeq = seq;
        t.heapDeadline = deadline;
        if (size == timers.length) {
            if (stale > PURGE_MIN_STALE && stale >= size / 2) {
                purge();
            }
            if (size == timers.length) {
                int capacity = timers.length * 2;
                deadlines = Arrays.copyOf(deadlines, capacity);
                seqs = Arrays.copyOf(seqs, capacity);
                timers = Arrays.copyOf(timers, capacity);
            }
        }
        siftUp(size++, deadline, seq, t);
    }

    /** Brings the heap in line with a change made to {@code t} on another thread. */
    void sync(TimerImpl t) {
        long deadline = t.deadline();
        if (!t.isPending()) {
            forget(t);
        } else if (t.heapSeq == 0 || t.heapDeadline != deadline) {
            push(t, deadline);
        }
    }

    /** Drops {@code t}'s entry (it was cancelled). */
    void forget(TimerImpl t) {
        if (t.heapSeq != 0) {
            t.heapSeq = 0;
            stale++;
        }
    }

    /** Whether any entry remains; the top may be stale, which only costs an early wake-up. */
    boolean isEmpty() {
        dropStaleTop();
        return size == 0;
    }

    /** The earliest deadline; only valid when {@link #isEmpty()} is false. */
    long topDeadline() {
        return deadlines[0];
    }

    /**
     * Fires every timer due at {@code now}: decides under each timer's lock whether it fires,
     * re-arms recurring ones, and hands the firing ones to {@code fire} in deadline order.
     *
     * @return how many fired
     */
    int expire(long now, Consumer<TimerImpl> fire) {
        int fired = 0;
        while (size > 0 && deadlines[0] - now <= 0) {
            TimerImpl t = timers[0];
            long seq = seqs[0];
            long deadline = deadlines[0];
            removeTop();
            if (t.heapSeq != seq) {
                stale--;
                continue;
            }
            t.heapSeq = 0;
            int claim = t.claim(deadline, now);
            if (claim < 0) {
                // cancelled, or moved by another thread and the news is still in the inbox
                if (t.isPending()) {
                    push(t, t.deadline());
                }
                continue;
            }
            if (claim == TimerImpl.PENDING) {
                push(t, t.deadline()); // recurring: its next period, before the task can cancel it
            }
            fire.accept(t);
            fired++;
        }
        return fired;
    }

    /** Empties the queue, handing each timer that still has a live entry to {@code each}. */
    void drain(Consumer<TimerImpl> each) {
        for (int i = 0; i < size; i++) {
            TimerImpl t = timers[i];
            if (t.heapSeq == seqs[i]) {
                t.heapSeq = 0;
                each.accept(t);
            }
            timers[i] = null;
        }
        size = 0;
        stale = 0;
    }

    private void dropStaleTop() {
        while (size > 0 && timers[0].heapSeq != seqs[0]) {
            removeTop();
            stale--;
        }
    }

    private void purge() {
        int kept = 0;
        for (int i = 0; i < size; i++) {
            TimerImpl t = timers[i];
            if (t.heapSeq == seqs[i]) {
                deadlines[kept] = deadlines[i];
                seqs[kept] = seqs[i];
                timers[kept] = t;
                kept++;
            }
        }
        Arrays.fill(timers, kept, size, null);
        size = kept;
        stale = 0;
        for (int i = (size >>> 1) - 1; i >= 0; i--) {
            siftDown(i, deadlines[i], seqs[i], timers[i]);
        }
    }

    private void removeTop() {
        int last = --size;
        long d = deadlines[last];
        long s = seqs[last];
        TimerImpl t = timers[last];
        timers[last] = null;
        if (last > 0) {
            siftDown(0, d, s, t);
        }
    }

    private static boolean before(long d1, long s1, long d2, long s2) {
        long diff = d1 - d2; // overflow-safe comparison of nanoTime values
        return diff < 0 || (diff == 0 && s1 < s2);
    }

    private void siftUp(int i, long d, long s, TimerImpl t) {
        while (i > 0) {
            int parent = (i - 1) >>> 1;
            if (!before(d, s, deadlines[parent], seqs[parent])) {
                break;
            }
            deadlines[i] = deadlines[parent];
            seqs[i] = seqs[parent];
            timers[i] = timers[parent];
            i = parent;
        }
        deadlines[i] = d;
        seqs[i] = s;
        timers[i] = t;
    }

    private void siftDown(int i, long d, long s, TimerImpl t) {
        int half = size >>> 1;
        while (i < half) {
            int child = 2 * i + 1;
            int right = child + 1;
            if (right < size && before(deadlines[right], seqs[right], deadlines[child], seqs[child])) {
                child = right;
            }
            if (!before(deadlines[child], seqs[child], d, s)) {
                break;
            }
            deadlines[i] = deadlines[child];
            seqs[i] = seqs[child];
            timers[i] = timers[child];
            i = child;
        }
        deadlines[i] = d;
        seqs[i] = s;
        timers[i] = t;
    }
}
