package io.cosched.internal;

import java.util.function.Consumer;

/**
 * The timers of one loop: a hierarchical timing wheel (Varghese and Lauck; the Linux and Kafka
 * timer wheels), confined to the loop's thread.
 *
 * <p>Seven levels of 64 slots; a level-0 slot spans one tick of 2^20 ns (about 1 ms), a level-n slot
 * 64^n ticks, so the wheel spans the 73 years a delay may have. A timer is linked into the level of
 * the highest 6-bit digit in which its deadline tick differs from the current tick. When the wheel
 * reaches a slot of a higher level, that slot's timers cascade into lower levels; when it reaches a
 * level-0 slot, its timers become ready. Add, cancel and move are O(1): an append to or an unlink
 * from an intrusive doubly-linked list, plus one bit in the level's occupancy mask, which also finds
 * the next slot to visit without scanning. This is what lets a loop carry a million pending request
 * timeouts that are nearly all cancelled (a binary heap paid two root-to-leaf sifts per add+cancel).
 *
 * <p>Ready timers are still compared with their exact deadline, so a timer never fires early; one
 * due later within the current tick waits in the ready list and the loop wakes for it exactly.
 */
final class TimerQueue {

    static final int TICK_SHIFT = 20; // 2^20 ns = 1.048576 ms per tick
    private static final int LEVEL_BITS = 6;
    private static final int SLOTS = 1 << LEVEL_BITS;
    private static final int LEVELS = 7; // 2^(20 + 42) ns: more than Durations.MAX_NANOS
    private static final int READY = LEVELS * SLOTS;

    private final long origin;
    private final TimerImpl[] heads = new TimerImpl[READY + 1];
    private final TimerImpl[] tails = new TimerImpl[READY + 1];
    private final long[] occupied = new long[LEVELS];
    // Per level-0 slot, no later than its earliest deadline (the earliest linked since it was last empty): the loop
    // wakes for the slot then rather than at its tick's start, once instead of twice for a lone timer.
    private final long[] earliest0 = new long[SLOTS];
    private long currentTick; // every slot up to this tick has been visited
    private int size;

    /** @param originNanos the clock's reading now; ticks count from it */
    public TimerQueue(long originNanos) {
        this.origin = originNanos;
    }

    /** Linked timers; for tests and stats. */
    int entries() {
        return size;
    }

    /** Links a pending timer at {@code deadline}, moving it if it was linked elsewhere. */
    void push(TimerImpl t, long deadline) {
        if (t.slot >= 0) {
            unlink(t);
        }
        t.linkedDeadline = deadline;
        long tick = (deadline - origin) >> TICK_SHIFT;
        int index;
        if (tick <= currentTick) {
            index = READY;
        } else {
            int level = (63 - Long.numberOfLeadingZeros(tick ^ currentTick)) / LEVEL_BITS;
            int slot = (int) (tick >>> (level * LEVEL_BITS)) & (SLOTS - 1);
            index = level * SLOTS + slot;
            if (level == 0 && (heads[index] == null || deadline - earliest0[slot] < 0)) {
                earliest0[slot] = deadline;
            }
            occupied[level] |= 1L << slot;
        }
        append(index, t);
    }

    /** Brings the wheel in line with a change made to {@code t} on another thread. */
    void sync(TimerImpl t) {
        long deadline = t.deadline();
        if (!t.isPending()) {
            forget(t);
        } else if (t.slot < 0 || t.linkedDeadline != deadline) {
            push(t, deadline);
        }
    }

    /** Unlinks {@code t} (it was cancelled). */
    void forget(TimerImpl t) {
        if (t.slot >= 0) {
            unlink(t);
        }
    }

    boolean isEmpty() {
        return size == 0;
    }

    /**
     * When the loop must next look at the wheel: the earliest exact deadline among ready timers; else, when a
     * level-0 slot is occupied, the earliest deadline linked there (a lone sleep wakes its loop once, at its
     * deadline); else the start of the next occupied slot's tick. Only valid when {@link #isEmpty()} is false.
     */
    long nextWakeNanos() {
        TimerImpl r = heads[READY];
        if (r != null) {
            long earliest = r.linkedDeadline;
            for (r = r.next; r != null; r = r.next) {
                if (r.linkedDeadline - earliest < 0) {
                    earliest = r.linkedDeadline;
                }
            }
            return earliest;
        }
        // a level-0 slot comes up within the current 64 ticks, before any slot of a higher level (they start later
        // blocks), so nothing cascades into it before it is reached
        long tick0 = nextEventTick(0);
        if (tick0 != Long.MAX_VALUE) {
            long start = origin + (tick0 << TICK_SHIFT);
            long earliest = earliest0[(int) tick0 & (SLOTS - 1)];
            return earliest - start > 0 ? earliest : start;
        }
        return origin + (nextEventTick() << TICK_SHIFT);
    }

    /**
     * Fires every timer due at {@code now}: decides under each timer's lock whether it fires,
     * re-arms recurring ones, and hands the firing ones to {@code fire}.
     *
     * @return how many fired
     */
    int expire(long now, Consumer<TimerImpl> fire) {
        advance((now - origin) >> TICK_SHIFT);
        // Take the ready list as it is now: timers linked while firing (re-armed, moved) wait for
        // the next call, so a tiny period cannot keep this loop going.
        TimerImpl t = takeSlot(READY);
        int fired = 0;
        while (t != null) {
            TimerImpl next = t.next;
            t.prev = null;
            t.next = null;
            if (t.linkedDeadline - now > 0) {
                append(READY, t); // due later within this tick
            } else {
                int claim = t.claim(t.linkedDeadline, now);
                if (claim < 0) {
                    // cancelled, or moved by another thread and the news is still in the inbox
                    if (t.isPending()) {
                        push(t, t.deadline());
                    }
                } else {
                    if (claim == TimerImpl.PENDING) {
                        push(t, t.deadline()); // recurring: its next period, before the task can cancel it
                    }
                    fire.accept(t);
                    fired++;
                }
            }
            t = next;
        }
        return fired;
    }

    /** Empties the wheel, handing every linked timer to {@code each}. */
    void drain(Consumer<TimerImpl> each) {
        for (int i = 0; i <= READY; i++) {
            TimerImpl t = takeSlot(i);
            while (t != null) {
                TimerImpl next = t.next;
                t.prev = null;
                t.next = null;
                each.accept(t);
                t = next;
            }
        }
    }

    // ---- the wheel -----------------------------------------------------------------------------

    /** Visits every occupied slot up to {@code nowTick}: cascades higher levels, readies level 0. */
    private void advance(long nowTick) {
        while (currentTick < nowTick) {
            long next = nextEventTick();
            if (next > nowTick) {
                currentTick = nowTick;
                return;
            }
            currentTick = next;
            // higher levels first: what they cascade may land in the level-0 slot of this same tick
            for (int level = LEVELS - 1; level >= 1; level--) {
                int shift = level * LEVEL_BITS;
                if ((next & ((1L << shift) - 1)) == 0) {
                    int slot = (int) (next >>> shift) & (SLOTS - 1);
                    if ((occupied[level] & (1L << slot)) != 0) {
                        cascade(level * SLOTS + slot);
                    }
                }
            }
            int slot0 = (int) next & (SLOTS - 1);
            if ((occupied[0] & (1L << slot0)) != 0) {
                spliceToReady(slot0);
            }
        }
    }

    /** The smallest tick after {@link #currentTick} at which an occupied slot comes up, or Long.MAX_VALUE. */
    private long nextEventTick() {
        long best = Long.MAX_VALUE;
        for (int level = 0; level < LEVELS; level++) {
            best = Math.min(best, nextEventTick(level));
        }
        return best;
    }

    /** The smallest tick after {@link #currentTick} at which an occupied slot of {@code level} comes up, or MAX. */
    private long nextEventTick(int level) {
        long mask = occupied[level];
        if (mask == 0) {
            return Long.MAX_VALUE;
        }
        int shift = level * LEVEL_BITS;
        int digit = (int) (currentTick >>> shift) & (SLOTS - 1);
        // Only slots after the current digit can be occupied: a timer is linked at a digit above
        // the current one, and a slot is emptied when the wheel reaches it.
        long later = digit == SLOTS - 1 ? 0 : mask & (-1L << (digit + 1));
        if (later == 0) {
            return Long.MAX_VALUE;
        }
        int slot = Long.numberOfTrailingZeros(later);
        long blockBase = (currentTick >>> (shift + LEVEL_BITS)) << (shift + LEVEL_BITS);
        return blockBase | ((long) slot << shift);
    }

    private void cascade(int index) {
        TimerImpl t = takeSlot(index);
        while (t != null) {
            TimerImpl next = t.next;
            t.prev = null;
            t.next = null;
            push(t, t.linkedDeadline);
            t = next;
        }
    }

    /** Moves a level-0 slot's whole list to the end of the ready list: its timers keep their order and links. */
    private void spliceToReady(int index) {
        TimerImpl head = heads[index];
        TimerImpl tail = tails[index];
        heads[index] = null;
        tails[index] = null;
        occupied[0] &= ~(1L << index);
        for (TimerImpl t = head; t != null; t = t.next) {
            t.slot = READY;
        }
        TimerImpl readyTail = tails[READY];
        head.prev = readyTail;
        if (readyTail == null) {
            heads[READY] = head;
        } else {
            readyTail.next = head;
        }
        tails[READY] = tail;
    }

    /** Detaches a whole slot's list (or the ready list); its timers count as unlinked until re-linked. */
    private TimerImpl takeSlot(int index) {
        TimerImpl head = heads[index];
        heads[index] = null;
        tails[index] = null;
        if (index < READY) {
            occupied[index / SLOTS] &= ~(1L << (index & (SLOTS - 1)));
        }
        for (TimerImpl t = head; t != null; t = t.next) {
            t.slot = -1;
            size--;
        }
        return head;
    }

    private void append(int index, TimerImpl t) {
        TimerImpl tail = tails[index];
        t.prev = tail;
        t.next = null;
        if (tail == null) {
            heads[index] = t;
        } else {
            tail.next = t;
        }
        tails[index] = t;
        t.slot = index;
        size++;
    }

    private void unlink(TimerImpl t) {
        int index = t.slot;
        TimerImpl prev = t.prev;
        TimerImpl next = t.next;
        if (prev == null) {
            heads[index] = next;
        } else {
            prev.next = next;
        }
        if (next == null) {
            tails[index] = prev;
        } else {
            next.prev = prev;
        }
        t.prev = null;
        t.next = null;
        t.slot = -1;
        size--;
        if (heads[index] == null && index < READY) {
            occupied[index / SLOTS] &= ~(1L << (index & (SLOTS - 1)));
        }
    }
}
