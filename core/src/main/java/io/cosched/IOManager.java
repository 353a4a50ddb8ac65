package io.cosched;

import io.cosched.internal.IORuntime;
import io.netty.bootstrap.Bootstrap;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/**
 * A scheduler whose carriers are the event loops of a Netty 4.2 {@code MultiThreadIoEventLoopGroup}
 * (epoll on Linux, else NIO): idling is {@code epoll_wait}, a wake-up is an
 * eventfd write and timers bound the wait. Give {@link #eventLoopGroup()} to a server and the
 * coroutine of a request runs on the very loop that read it.
 *
 * <p>A coroutine spawned from a coroutine (or a loop thread) of this IOManager stays on that loop;
 * one spawned from any other thread goes to the loop with the fewest live coroutines, round-robin
 * among equals. A coroutine's steps always run on its loop.
 *
 * <p>An interface whose one implementation {@link #builder()} makes; applications use it, they do
 * not implement it.
 *
 * <pre>{@code
 * try (IOManager io = IOManager.builder().name("cosched-io").threads(2).build()) {
 *     io.start();
 *     io.spawn(() -> {
 *         Coroutines.sleep(Duration.ofMillis(10)); // parks on the loop's timers
 *         return Thread.currentThread().toString(); // VirtualThread[#..]/runnable@cosched-io-0
 *     }).join();
 * }
 * }</pre>
 */
public interface IOManager extends Scheduler {

    /** The stall threshold a builder uses unless told otherwise. */
    Duration DEFAULT_STALL_THRESHOLD = Duration.ofMillis(100);

    /** The longest a stall counts as warm-up unless a builder is told otherwise ({@code stallWarmUpLimit}). */
    Duration DEFAULT_STALL_WARM_UP_LIMIT = Duration.ofSeconds(1);

    static Builder builder() {
        return new Builder();
    }

    /**
     * Starts the event loop threads. The first IOManager started also serves {@link Coroutines#go}
     * from plain threads. Calling it on a running IOManager does nothing.
     */
    @Override
    void start();

    /**
     * The IOManager that {@link Coroutines#go} uses on a thread outside any scheduler, and
     * {@code io.cosched.net.LoopSocketFactory} when it names none: the first IOManager started that
     * is still running, else a shared daemon IOManager named {@code cosched-go}, started on first use
     * and never stopped (an IOManager started later takes over from it).
     */
    static IOManager defaultInstance() {
        return IORuntime.defaultInstance();
    }

    /**
     * The running IOManager named {@code name} (of several, the first started), if any; {@code name} may also be the
     * key {@link io.cosched.net.LoopSocketFactory#argument} puts in a socket factory's argument, which finds one
     * IOManager only.
     */
    static Optional<IOManager> running(String name) {
        return IORuntime.running(name);
    }

    /** The event loops, for a Netty or Reactor Netty server. cosched owns them: stop the IOManager, not the group. */
    EventLoopGroup eventLoopGroup();

    /**
     * A group of one event loop for a server's listening socket (Netty's "boss" group), made on first
     * use and stopped with this IOManager. It carries no coroutine, so a loop stuck in a handler cannot
     * stop the server from accepting; give it to the server as its parent group and
     * {@link #eventLoopGroup()} as the child group. New connections then go round-robin to the loops
     * that are moving: a loop the stall watchdog sees stuck, or that has been in one task for a tenth
     * of {@code stallThreshold}, is skipped while another is free.
     *
     * @throws java.util.concurrent.RejectedExecutionException if this IOManager is stopping or stopped
     */
    EventLoopGroup acceptorGroup();

    /**
     * Event loop {@code index} (0-based, below {@link #threads()}), for a Netty channel that should
     * live on it.
     *
     * @throws IllegalArgumentException if {@code index} is out of range
     */
    EventLoop eventLoop(int index);

    /**
     * A new Netty {@link Bootstrap} for a client TCP connection on loop {@code index}, with this
     * IOManager's transport (epoll or NIO socket channels); add a handler and options, then connect.
     *
     * @throws IllegalArgumentException if {@code index} is out of range
     */
    Bootstrap bootstrap(int index);

    /**
     * The loop whose connections blocking I/O of the calling code should use, so that the thread
     * that reads the bytes is the thread that resumes the caller: the home loop of the calling
     * coroutine (or of the coroutine that started the calling virtual thread); any other thread gets the
     * loop with the fewest live coroutines. A loop thread itself, outside any coroutine, gets none: blocking
     * there holds its loop for the call's length (on its own loop's connection for ever), and two loops
     * waiting on each other's connections hold both; it fails at once, naming the fix.
     *
     * @return a loop index, for {@link #eventLoop(int)} or {@link #bootstrap(int)}
     * @throws IllegalStateException when called on a loop thread outside any coroutine
     */
    int loopIndexForCaller();

    /**
     * The loop the calling code is on: the home loop of the calling coroutine (or of the coroutine that started
     * the calling virtual thread), or the loop whose thread is calling; {@code -1} on any other thread. Unlike
     * {@link #loopIndexForCaller()} a loop thread gets its own loop: for non-blocking code that wants its
     * connections where it runs, as Reactor Netty's colocation does.
     */
    int currentLoopIndex();

    /** Timers on these event loops. */
    TimerManager timers();

    /** The transport in use: {@link Transport#EPOLL} or {@link Transport#NIO}, never {@link Transport#AUTO}. */
    Transport transport();

    /**
     * Builds an {@link IOManager}: {@code name} (default {@code cosched-io}), {@code threads} (event
     * loops), {@code transport}, {@code daemon}, {@code requireCarrierMode}, {@code stallThreshold},
     * {@code stallWarmUpLimit}, {@code trackCoroutines}, {@code scopeHook}. Every argument is checked by {@link #build()}.
     */
    final class Builder extends SchedulerBuilder<Builder> {
        private Transport transport = Transport.AUTO;

        private Builder() {
            super("cosched-io");
        }

        @Override
        Builder self() {
            return this;
        }

        /** {@code AUTO} (default: epoll where available, else NIO), {@code EPOLL} or {@code NIO}. */
        public Builder transport(Transport transport) {
            this.transport = transport;
            return this;
        }

        /**
         * @throws TransportUnavailableException if {@code EPOLL} was asked for and is unavailable
         * @throws CarrierModeUnavailableException if carrier mode is required and unavailable
         */
        public IOManager build() {
            Objects.requireNonNull(transport, "transport: null (expected: AUTO, EPOLL or NIO)");
            return new IORuntime(settings(transport, false));
        }
    }
}
