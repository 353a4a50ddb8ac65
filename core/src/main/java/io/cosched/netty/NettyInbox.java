package io.cosched.netty;

import io.cosched.Parking;
import io.cosched.internal.Deadline;
import io.cosched.internal.Waits;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufHolder;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.socket.ChannelInputShutdownEvent;
import io.netty.util.ReferenceCountUtil;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.SocketTimeoutException;
import java.nio.channels.ClosedByInterruptException;
import java.util.ArrayDeque;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import java.util.function.Predicate;
import org.jspecify.annotations.Nullable;

/**
 * The blocking face of a Netty channel's inbound side, for one reader at a time: the last handler
 * of the pipeline queues what the channel's event loop reads, and {@link #take} hands it to the
 * reader, parking it until something arrives, the input ends or a time limit passes. A coroutine
 * parks and frees its carrier; a platform thread blocks.
 *
 * <p>When the reader is a coroutine homed on the channel's own loop (see
 * {@link io.cosched.IOManager#loopIndexForCaller()}), the loop thread that read the bytes is the thread
 * that resumes it, and a time limit is a timer of that loop: no other thread takes part in the
 * wait. That is the point of opening connections on the loops instead of using JDK sockets, whose
 * waits end on the JDK's poller threads.
 *
 * <p>Flow control: once more than {@code highWater} bytes are queued the channel stops reading
 * (auto-read off) until the reader has taken them down to {@code lowWater}, so a slow reader holds
 * the peer back through TCP instead of filling the heap. {@link #awaitWritable} is the matching wait
 * for writers when the channel's outbound buffer is full.
 *
 * <p>Messages taken are the reader's to release; {@link #discard()} releases what was never taken.
 *
 * <p>An interrupted reader closes the channel, as an interruptible JDK channel does, unless the inbox
 * was made to leave it open ({@link #NettyInbox(int, int, boolean)}): then the reader gets an
 * {@link InterruptedIOException} and decides itself, for instance to {@link #drain} the rest of a
 * response on the loop and keep the connection.
 *
 * <p>Most of its length is the contract of its public methods, written out for callers outside cosched.
 */
public final class NettyInbox extends ChannelInboundHandlerAdapter {

    /** Default: stop reading above 256 KiB queued, read again at 64 KiB. */
    public static final int DEFAULT_HIGH_WATER = 256 * 1024;

    public static final int DEFAULT_LOW_WATER = 64 * 1024;

    private final int highWater;
    private final int lowWater;
    private final boolean closeOnInterrupt;

    @SuppressWarnings("NullAway.Init") // set by handlerAdded, before the channel is handed to a reader
    private volatile Channel channel;

    private final Runnable resumeReading = this::resumeReading;
    // the waits' conditions, made once per inbox: a take or a wait for writability allocates nothing
    private final BooleanSupplier readable = this::readable;
    private final BooleanSupplier writable = this::writable;
    private boolean inputEnded; // confined to the loop: no read may be started after the input ended

    // guarded by this
    private final ArrayDeque<Object> queue = new ArrayDeque<>();
    private long queuedBytes;
    private boolean readPaused;
    private boolean ended;
    private boolean discarded;
    private @Nullable IOException failure;
    private @Nullable Thread reader;
    private @Nullable Thread writer;
    private @Nullable Predicate<Object> drainUntil; // set while the loop drains the input: which message is the last
    private @Nullable Runnable drained;
    private @Nullable Runnable listener; // set while a reader on the loop is told instead of woken

    public NettyInbox() {
        this(DEFAULT_HIGH_WATER, DEFAULT_LOW_WATER);
    }

    /**
     * @param highWater bytes queued above which the channel stops reading ({@code > 0})
     * @param lowWater  bytes queued at or below which it reads again ({@code 0 <= lowWater < highWater})
     */
    public NettyInbox(int highWater, int lowWater) {
        this(highWater, lowWater, true);
    }

    /**
     * @param highWater        bytes queued above which the channel stops reading ({@code > 0})
     * @param lowWater         bytes queued at or below which it reads again ({@code 0 <= lowWater < highWater})
     * @param closeOnInterrupt whether an interrupted reader or writer closes the channel (as a JDK channel
     *                         does) or gets an {@link InterruptedIOException} with the channel left open
     */
    public NettyInbox(int highWater, int lowWater, boolean closeOnInterrupt) {
        this.closeOnInterrupt = closeOnInterrupt;
        if (highWater <= 0) {
            throw new IllegalArgumentException("highWater: " + highWater + " (expected: > 0)");
        }
        if (lowWater < 0 || lowWater >= highWater) {
            throw new IllegalArgumentException(
                    "lowWater: " + lowWater + " (expected: 0 <= lowWater < highWater " + highWater + ")");
        }
        this.highWater = highWater;
        this.lowWater = lowWater;
    }

    // ---- the loop's side ---------------------------------------------------------------------------

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        channel = ctx.channel();
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        Thread wake;
        boolean pause = false;
        Runnable done = null;
        synchronized (this) {
            if (discarded) {
                ReferenceCountUtil.release(msg);
                return;
            }
            if (drainUntil != null) {
                if (drainUntil.test(msg)) {
                    done = drained;
                    drainUntil = null;
                    drained = null;
                }
                ReferenceCountUtil.release(msg);
                wake = null;
            } else {
                queue.add(msg);
                queuedBytes += sizeOf(msg);
                if (queuedBytes > highWater && !readPaused) {
                    readPaused = true;
                    pause = true;
                }
                wake = reader;
                reader = null;
                done = listener;
            }
        }
        if (pause) {
            ctx.channel().config().setAutoRead(false);
        }
        if (done != null) {
            done.run();
        }
        if (wake != null) {
            LockSupport.unpark(wake);
        }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        inputEnded = true;
        end(null);
        wakeWriter();
        ctx.fireChannelInactive();
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
        if (evt instanceof ChannelInputShutdownEvent) {
            inputEnded = true;
            end(null); // the peer shut its output down (half-closure allowed): end of stream, writes go on
        }
        ctx.fireUserEventTriggered(evt);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        end(cause instanceof IOException io ? io : new IOException(cause.toString(), cause));
        wakeWriter();
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) {
        if (ctx.channel().isWritable()) {
            wakeWriter();
        }
        ctx.fireChannelWritabilityChanged();
    }

    /**
     * On the loop: switches reading back on, unless the input has ended meanwhile (Netty would then
     * re-register a socket the kernel has finished with, and fail).
     */
    private void resumeReading() {
        if (!inputEnded) {
            channel.config().setAutoRead(true);
        }
    }

    private void end(@Nullable IOException cause) {
        Thread wake;
        Runnable tell;
        synchronized (this) {
            if (cause != null && failure == null) {
                failure = cause;
            }
            ended = true;
            drainUntil = null; // the input ended before the last message: the connection is done
            drained = null;
            wake = reader;
            reader = null;
            tell = listener;
        }
        if (tell != null) {
            tell.run();
        }
        if (wake != null) {
            LockSupport.unpark(wake);
        }
    }

    private void wakeWriter() {
        Thread wake;
        synchronized (this) {
            wake = writer;
            writer = null;
        }
        if (wake != null) {
            LockSupport.unpark(wake);
        }
    }

    // ---- the reader's side -------------------------------------------------------------------------

    /**
     * The next message, waiting for one up to {@code timeoutNanos} ({@code <= 0}: no timeout).
     *
     * @return the message, or {@code null} at the end of the input (the peer closed or shut down its
     *         output, or the inbox was discarded) once everything before it has been taken
     * @throws SocketTimeoutException when the timeout passes first ("Read timed out"); the channel stays usable
     * @throws ClosedByInterruptException when the reader is interrupted; the channel is then closed and
     *         the interrupt status stays set, as for an interruptible JDK channel ({@link InterruptedIOException}
     *         with the channel left open, for an inbox made not to close on an interrupt)
     * @throws IOException what the channel failed with, once the messages before the failure are taken;
     *         or when called on the channel's own event loop thread, which would never be woken
     */
    public @Nullable Object take(long timeoutNanos) throws IOException {
        Object msg = poll();
        if (msg != null) {
            return msg;
        }
        checkNotOwnLoop("read");
        Deadline limit = timeoutNanos > 0 ? Deadline.after(timeoutNanos) : null;
        Parking.Outcome parked;
        try {
            parked = Waits.park(readable, limit, null, false, this);
        } finally {
            if (limit != null) {
                limit.cancel();
            }
            synchronized (this) {
                if (reader == Thread.currentThread()) {
                    reader = null;
                }
            }
        }
        if (parked == Parking.Outcome.INTERRUPTED) {
            throw interrupted();
        }
        if (parked == Parking.Outcome.DEADLINE_PASSED) {
            throw new SocketTimeoutException("Read timed out");
        }
        msg = poll(); // there is one reader: what it saw queued is still there, unless discarded (the end)
        if (msg == null) {
            synchronized (this) {
                if (failure != null) {
                    throw new IOException(failure.getMessage(), failure);
                }
            }
        }
        return msg;
    }

    /**
     * The reader's wait condition, under the lock the loop wakes it under: whether there is something to take, or
     * the input ended or failed; else the calling thread becomes the reader to wake.
     */
    private boolean readable() {
        synchronized (this) {
            if (!queue.isEmpty() || failure != null || ended) {
                return true;
            }
            reader = Thread.currentThread();
            return false;
        }
    }

    /**
     * The next message if one is queued, else {@code null} (which says nothing about the end of the
     * input: see {@link #isEnded()}).
     */
    public @Nullable Object poll() {
        Object msg;
        boolean resume;
        synchronized (this) {
            msg = queue.poll();
            if (msg == null) {
                return null;
            }
            resume = taken(msg);
        }
        if (resume) {
            channel.eventLoop().execute(resumeReading);
        }
        return msg;
    }

    /** Under the lock, after {@code msg} left the queue: whether reading must be switched back on. */
    private boolean taken(Object msg) {
        queuedBytes -= sizeOf(msg);
        if (readPaused && !ended && queuedBytes <= lowWater) {
            readPaused = false;
            return true;
        }
        return false;
    }

    /** Bytes queued and not yet taken. */
    public synchronized long queuedBytes() {
        return queuedBytes;
    }

    /** Whether nothing is queued. */
    public synchronized boolean isEmpty() {
        return queue.isEmpty();
    }

    /** Whether the input has ended or failed (messages queued before that may still be taken). */
    public synchronized boolean isEnded() {
        return ended;
    }

    /**
     * Waits until the channel can take more writes without growing its outbound buffer past Netty's
     * high water mark, or is closed.
     *
     * @throws ClosedByInterruptException when interrupted; the channel is then closed ({@link InterruptedIOException}
     *         with the channel left open, for an inbox made not to close on an interrupt)
     * @throws IOException when called on the channel's own event loop thread
     */
    public void awaitWritable() throws IOException {
        Channel ch = channel;
        if (ch.isWritable() || !ch.isActive()) {
            return;
        }
        checkNotOwnLoop("write");
        Parking.Outcome parked;
        try {
            parked = Waits.park(writable, null, null, false, this);
        } finally {
            synchronized (this) {
                if (writer == Thread.currentThread()) {
                    writer = null;
                }
            }
        }
        if (parked == Parking.Outcome.INTERRUPTED) {
            throw interrupted();
        }
    }

    /** The writer's wait condition: the calling thread becomes the writer to wake, then looks at the channel. */
    private boolean writable() {
        synchronized (this) {
            writer = Thread.currentThread();
        }
        Channel ch = channel;
        return ch.isWritable() || !ch.isActive();
    }

    /**
     * Tells {@code listener} instead of waking a reader: from now on it runs on the channel's event loop
     * each time a message is queued and when the input ends or fails, and takes what it wants with
     * {@link #poll()}. For a reader that lives on the loop itself (an asynchronous client) and so cannot
     * park in {@link #take}. What was queued before the call does not run it: look with {@link #poll()}
     * once after setting it. {@code null} stops the telling.
     */
    public void listen(@Nullable Runnable listener) {
        synchronized (this) {
            this.listener = listener;
        }
    }

    /** What the channel failed with, or {@code null}; see {@link #isEnded()}. */
    public synchronized @Nullable IOException failure() {
        return failure;
    }

    /**
     * Releases what was queued and not taken, and anything that arrives later; the reader sees the
     * end of the input. For when the connection is being closed.
     */
    public void discard() {
        Thread wake;
        synchronized (this) {
            discarded = true;
            ended = true;
            Object msg;
            while ((msg = queue.poll()) != null) {
                ReferenceCountUtil.release(msg);
            }
            queuedBytes = 0;
            wake = reader;
            reader = null;
        }
        if (wake != null) {
            LockSupport.unpark(wake);
        }
        wakeWriter();
    }

    /**
     * Hands the rest of the input to the loop: what is queued and what arrives later is released, until
     * {@code last} accepts a message (released too); then {@code drained} runs, on the loop (or at once,
     * on the caller, when that message is queued already), and the inbox is open for the next reader. If
     * the input ends first, {@code drained} never runs. For a reader that gives up on a reply but would
     * keep the connection: an HTTP client whose caller was interrupted drains the rest of the response
     * and puts the connection back in its connection pool.
     */
    public void drain(Predicate<Object> last, Runnable drained) {
        boolean found = false;
        boolean resume;
        synchronized (this) {
            listener = null; // the loop drains; nobody reads any more
            Object msg;
            while (!found && (msg = queue.poll()) != null) {
                queuedBytes -= sizeOf(msg);
                found = last.test(msg);
                ReferenceCountUtil.release(msg);
            }
            resume = readPaused && !ended;
            readPaused = false;
            if (!found) {
                if (ended) {
                    return; // the input is over without its last message: nothing to keep
                }
                drainUntil = last;
                this.drained = drained;
            }
        }
        if (resume) {
            channel.eventLoop().execute(resumeReading);
        }
        if (found) {
            drained.run();
        }
    }

    /** Whether the loop is draining the input ({@link #drain}). */
    public synchronized boolean isDraining() {
        return drainUntil != null;
    }

    private IOException interrupted() {
        Thread.currentThread().interrupt();
        if (!closeOnInterrupt) {
            return new InterruptedIOException("interrupted while waiting on " + channel + " (left open)");
        }
        channel.close();
        return new ClosedByInterruptException();
    }

    /** A wait on the channel's own loop thread would never end: only that thread can read the bytes. */
    private void checkNotOwnLoop(String what) throws IOException {
        Channel ch = channel;
        if (ch != null && ch.eventLoop().inEventLoop()) {
            throw new IOException("blocking " + what + " on " + ch + " called on its own event loop thread "
                    + Thread.currentThread().getName() + ", which would never be woken: call it from a coroutine "
                    + "or another thread");
        }
    }

    private static long sizeOf(Object msg) {
        if (msg instanceof ByteBuf buf) {
            return buf.readableBytes();
        }
        if (msg instanceof ByteBufHolder holder) {
            return holder.content().readableBytes();
        }
        return 0;
    }
}
