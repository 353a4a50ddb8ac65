package io.cosched;

import io.cosched.internal.IoRuntime;
import io.netty.bootstrap.Bootstrap;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A scheduler whose carriers are the event loops of a Netty 4.2 {@code MultiThreadIoEventLoopGroup}
 * (epoll on Linux, else NIO): sylar's IOManager, where idling is {@code epoll_wait}, a wake-up is an
 * eventfd write and timers bound the wait. Give {@link #eventLoopGroup()} to a server and the
 * coroutine of a request runs on the very loop that read it.
 *
 * <p>A coroutine spawned from a coroutine (or a loop thread) of this IOManager stays on that loop;
 * one spawned from any other thread goes to the loop with the fewest live coroutines, round-robin
 * among equals. A coroutine's steps always run on its loop.
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
public final class IOManager extends AbstractScheduler<IoRuntime> {

    // The running IOManagers in start order, for code that cannot be handed one: Coroutines.go on a
    // plain thread, a socket factory that a driver instantiates by class name.
    private static final CopyOnWriteArrayList<IOManager> RUNNING = new CopyOnWriteArrayList<>();

    private final Transport transport;

    private IOManager(IoRuntime runtime) {
        super(runtime);
        this.transport = "epoll".equals(runtime.transportName()) ? Transport.EPOLL : Transport.NIO;
    }

    public static Builder builder() {
        return new Builder();
    }

    /** Starts the event loop threads. The first IOManager started also serves {@link Coroutines#go} from plain threads. */
    @Override
    public void start() {
        runtime.start();
        RUNNING.addIfAbsent(this);
    }

    @Override
    public boolean stop(Duration timeout) {
        RUNNING.remove(this);
        return runtime.stop(timeout);
    }

    /**
     * The IOManager that {@link Coroutines#go} uses on a thread outside any scheduler, and
     * {@code io.cosched.net.LoopSocketFactory} when it names none: the first IOManager started that
     * is still running, else a shared daemon IOManager named {@code cosched-go}, started on first use
     * and never stopped (an IOManager started later takes over from it).
     */
    public static IOManager defaultInstance() {
        for (IOManager io : RUNNING) { // a snapshot: the first in start order
            return io;
        }
        return Shared.INSTANCE;
    }

    /** The running IOManager named {@code name} (of several, the first started), if any. */
    public static Optional<IOManager> running(String name) {
        for (IOManager io : RUNNING) {
            if (io.name().equals(name)) {
                return Optional.of(io);
            }
        }
        return Optional.empty();
    }

    /** The event loops, for a Netty or Reactor Netty server. cosched owns them: stop the IOManager, not the group. */
    public EventLoopGroup eventLoopGroup() {
        return runtime.group();
    }

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
    public EventLoopGroup acceptorGroup() {
        return runtime.acceptorGroup();
    }

    /**
     * Event loop {@code index} (0-based, below {@link SchedulerStats#threads()}), for a Netty channel
     * that should live on it.
     *
     * @throws IllegalArgumentException if {@code index} is out of range
     */
    public EventLoop eventLoop(int index) {
        return runtime.eventLoop(index);
    }

    /**
     * A new Netty {@link Bootstrap} for a client TCP connection on loop {@code index}, with this
     * IOManager's transport (epoll or NIO socket channels); add a handler and options, then connect.
     *
     * @throws IllegalArgumentException if {@code index} is out of range
     */
    public Bootstrap bootstrap(int index) {
        return runtime.bootstrap(index);
    }

    /**
     * The loop whose connections blocking I/O of the calling code should use, so that the thread
     * that reads the bytes is the thread that resumes the caller: the home loop of the calling
     * coroutine (or of the coroutine that started the calling virtual thread). A loop thread itself,
     * outside any coroutine, would wait for I/O that only it can run, so it gets another loop; any
     * other thread gets the loop with the fewest live coroutines.
     *
     * @return a loop index, for {@link #eventLoop(int)} or {@link #bootstrap(int)}
     * @throws IllegalStateException when called on the loop thread of an IOManager with one loop
     */
    public int loopForCaller() {
        return runtime.loopForCaller();
    }

    /** Timers on these event loops. */
    public TimerManager timers() {
        return runtime.timers();
    }

    /** The transport in use: never {@link Transport#AUTO}. */
    public Transport transport() {
        return transport;
    }

    /**
     * Builds an {@link IOManager}: {@code name} (default {@code cosched-io}), {@code threads} (event
     * loops), {@code transport}, {@code daemon}, {@code requireCarrierMode}, {@code stallThreshold},
     * {@code trackCoroutines}. Every argument is checked by {@link #build()}.
     */
    public static final class Builder extends AbstractScheduler.Builder<Builder> {
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
            check();
            Objects.requireNonNull(transport, "transport: null (expected: AUTO, EPOLL or NIO)");
            return new IOManager(new IoRuntime(name, threads, transport, daemon, requireCarrierMode,
                    stallThresholdNanos(), trackCoroutines));
        }
    }

    private static final class Shared {
        static final IOManager INSTANCE = create();

        private static IOManager create() {
            IOManager io = builder().name("cosched-go").daemon(true).build();
            io.runtime.start(); // not listed as running: any IOManager a user starts comes first
            return io;
        }
    }
}
