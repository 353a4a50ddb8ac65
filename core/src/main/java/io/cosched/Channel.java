package io.cosched;

import io.cosched.internal.CoroutineImpl;
import io.cosched.internal.Durations;
import io.cosched.internal.Waits;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Iterator;
import java.util.NoSuchElementException;
import java.util.Objects;
import java.util.concurrent.CancellationException;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.jspecify.annotations.Nullable;

/**
 * A channel for handing items from coroutine to coroutine (or any threads). With capacity 0 it is
 * a rendezvous: {@link #send} returns once a receiver has taken the item. With capacity N, sends
 * return at once while fewer than N items are buffered, and wait (back-pressure) when it is full.
 *
 * <p>{@link #close()}: senders, waiting or new, fail with {@link ChannelClosedException} and their
 * items are not delivered; receivers still get every item that was accepted, then see the channel
 * closed. Waiting parks a coroutine, never its carrier. {@code null} items are rejected.
 *
 * <pre>{@code
 * Channel<String> ch = new Channel<>(16);
 * io.spawn(() -> { for (String s : lines) ch.send(s); ch.close(); return null; });
 * for (String s : ch) { handle(s); } // ends when closed and drained
 * }</pre>
 */
public final class Channel<T> implements Iterable<T> {

    private final int capacity;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition itemOrSender = lock.newCondition();
    private final ArrayDeque<T> buffer;
    private final ArrayDeque<Sender<T>> senders = new ArrayDeque<>();
    private boolean closed;

    /** A sender waiting for its item to be taken (rendezvous) or for room (full buffer). */
    private static final class Sender<T> {
        final T item;
        final Condition settled;
        boolean taken;
        boolean failed;

        Sender(T item, Condition settled) {
            this.item = item;
            this.settled = settled;
        }
    }

    /**
     * @param capacity 0 for a rendezvous channel, else how many items it buffers
     */
    public Channel(int capacity) {
        if (capacity < 0) {
            throw new IllegalArgumentException("capacity: " + capacity + " (expected: >= 0)");
        }
        this.capacity = capacity;
        this.buffer = new ArrayDeque<>(Math.min(capacity, 1024));
    }

    public int capacity() {
        return capacity;
    }

    /** Items buffered now (always 0 for a rendezvous channel). */
    public int size() {
        lock.lock();
        try {
            return buffer.size();
        } finally {
            lock.unlock();
        }
    }

    public boolean isClosed() {
        lock.lock();
        try {
            return closed;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Sends {@code item}, waiting as long as it takes for room (or, at capacity 0, for a receiver).
     *
     * @throws ChannelClosedException if the channel is or gets closed before the item is accepted
     */
    public void send(T item) throws InterruptedException {
        send0(item, -1);
    }

    /**
     * Sends {@code item}, waiting at most {@code timeout}.
     *
     * @return {@code false} if the timeout passed first (the item was not sent)
     * @throws ChannelClosedException if the channel is or gets closed before the item is accepted
     */
    public boolean send(T item, Duration timeout) throws InterruptedException {
        return send0(item, Durations.toNanos("timeout", timeout, false));
    }

    private boolean send0(T item, long nanos) throws InterruptedException {
        Objects.requireNonNull(item, "item: null (expected: an item; channels do not carry null)");
        lock.lockInterruptibly();
        try {
            if (closed) {
                throw new ChannelClosedException("send on a closed channel");
            }
            if (senders.isEmpty() && buffer.size() < capacity) {
                buffer.addLast(item);
                itemOrSender.signal();
                return true;
            }
            if (nanos == 0) {
                return false;
            }
            Sender<T> me = new Sender<>(item, lock.newCondition());
            senders.addLast(me);
            itemOrSender.signal();
            boolean timed = nanos >= 0;
            CoroutineImpl<?> co = Waits.beginWait();
            try {
                while (!me.taken && !me.failed) {
                    if (!timed) {
                        me.settled.await();
                    } else {
                        if (nanos <= 0) {
                            senders.remove(me);
                            return false;
                        }
                        nanos = me.settled.awaitNanos(nanos); // may come back negative
                    }
                }
            } catch (InterruptedException e) {
                if (me.taken) {
                    Thread.currentThread().interrupt(); // delivered after all: report success
                    return true;
                }
                senders.remove(me);
                throw e;
            } finally {
                Waits.endWait(co);
            }
            if (me.failed) {
                throw new ChannelClosedException("channel closed before the item was received");
            }
            return true;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Receives the next item, waiting as long as it takes.
     *
     * @throws ChannelClosedException once the channel is closed and every accepted item was received
     */
    public T receive() throws InterruptedException {
        return Objects.requireNonNull(receive0(-1), "an untimed receive returns an item or throws");
    }

    /**
     * Receives the next item, waiting at most {@code timeout}.
     *
     * @return the item, or {@code null} if the timeout passed first
     * @throws ChannelClosedException once the channel is closed and every accepted item was received
     */
    public @Nullable T receive(Duration timeout) throws InterruptedException {
        return receive0(Durations.toNanos("timeout", timeout, false));
    }

    private @Nullable T receive0(long nanos) throws InterruptedException {
        boolean timed = nanos >= 0;
        lock.lockInterruptibly();
        try {
            CoroutineImpl<?> co = null;
            try {
                for (; ; ) {
                    T item = buffer.pollFirst();
                    if (item != null) {
                        Sender<T> waiting = senders.pollFirst();
                        if (waiting != null) { // room now: the longest-waiting sender's item moves in
                            buffer.addLast(waiting.item);
                            waiting.taken = true;
                            waiting.settled.signal();
                        }
                        return item;
                    }
                    Sender<T> direct = senders.pollFirst();
                    if (direct != null) {
                        direct.taken = true;
                        direct.settled.signal();
                        return direct.item;
                    }
                    if (closed) {
                        throw new ChannelClosedException("channel closed and drained");
                    }
                    if (timed && nanos <= 0) {
                        return null;
                    }
                    if (co == null) {
                        co = Waits.beginWait();
                    }
                    if (!timed) {
                        itemOrSender.await();
                    } else {
                        nanos = itemOrSender.awaitNanos(nanos); // <= 0: one last look above, then null
                    }
                }
            } finally {
                Waits.endWait(co);
            }
        } finally {
            lock.unlock();
        }
    }

    /** Closes the channel. Waiting senders fail; buffered items stay for receivers. Closing twice is harmless. */
    public void close() {
        lock.lock();
        try {
            if (closed) {
                return;
            }
            closed = true;
            Sender<T> s;
            while ((s = senders.pollFirst()) != null) {
                s.failed = true;
                s.settled.signal();
            }
            itemOrSender.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /**
     * Receives items until the channel is closed and drained. {@code hasNext()} waits for the next
     * item; if the waiting thread is interrupted it keeps the interrupt flag set and throws
     * {@link CancellationException}; no item is lost by that, it stays in the channel.
     */
    @Override
    public Iterator<T> iterator() {
        return new Iterator<>() {
            private @Nullable T next;

            @Override
            public boolean hasNext() {
                if (next != null) {
                    return true;
                }
                try {
                    next = receive();
                    return true;
                } catch (ChannelClosedException closedAndDrained) {
                    return false;
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    CancellationException ce =
                            new CancellationException("interrupted while waiting for a channel item");
                    ce.initCause(e);
                    throw ce;
                }
            }

            @Override
            public T next() {
                if (!hasNext()) {
                    throw new NoSuchElementException("channel closed and drained");
                }
                T item = Objects.requireNonNull(next, "hasNext() read the next item");
                next = null;
                return item;
            }
        };
    }

    @Override
    public String toString() {
        lock.lock();
        try {
            return "Channel[capacity=" + capacity + ", buffered=" + buffer.size() + ", waitingSenders=" + senders.size()
                    + (closed ? ", closed" : "") + "]";
        } finally {
            lock.unlock();
        }
    }
}
