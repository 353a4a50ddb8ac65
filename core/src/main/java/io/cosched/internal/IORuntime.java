package io.cosched.internal;

import io.cosched.IOManager;
import io.cosched.SchedulerStats;
import io.cosched.Transport;
import io.netty.bootstrap.Bootstrap;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.util.concurrent.FastThreadLocalThread;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;

/** The {@link IOManager}: carriers that are Netty event loops. */
public final class IORuntime extends CoroutineRuntime implements IOManager {

    // The running IOManagers in start order, for code that cannot be handed one: Coroutines.go on a
    // plain thread, a socket factory that a driver instantiates by class name.
    private static final CopyOnWriteArrayList<IORuntime> RUNNING_MANAGERS = new CopyOnWriteArrayList<>();

    /** How long stop waits for the loops to terminate once the coroutines are gone. */
    private static final long LOOP_TERMINATION_NANOS = TimeUnit.SECONDS.toNanos(10);

    private static final Runnable NOOP = () -> {};

    private static final AtomicInteger INSTANCES = new AtomicInteger();

    private final String key = name() + "#" + INSTANCES.incrementAndGet();
    private final LoopCarrier[] carriers;
    private final CarrierEventLoopGroup group;
    private final IOTransport transport;
    private final IOTimerManager timerManager;
    private final AtomicInteger roundRobin = new AtomicInteger();
    private final boolean daemon;
    private boolean carriersClosed; // guarded by this
    private @Nullable EventLoopGroup acceptor; // guarded by this; made on first use

    public IORuntime(RuntimeSettings settings) {
        this(settings, Ticker.SYSTEM);
    }

    /** With the clock of the timers and the loop chooser given: tests drive it. */
    IORuntime(RuntimeSettings settings, Ticker ticker) {
        super(settings, ticker);
        this.transport = IOTransport.select(settings.transport());
        this.daemon = settings.daemon();
        this.carriers = new LoopCarrier[settings.threads()];
        for (int i = 0; i < carriers.length; i++) {
            carriers[i] = new LoopCarrier(this, i, name + "-" + i, daemon, ticker);
        }
        this.group = new CarrierEventLoopGroup(
                carriers,
                this.transport.handlerFactory(),
                this.transport.deferredChanges(),
                settings.stallThresholdNanos(),
                ticker);
        // Should anyone else shut the group down, nothing queued on it may be lost.
        this.group.terminationFuture().addListener(f -> closeCarriers());
        this.timerManager = new IOTimerManager(this);
    }

    /**
     * The IOManager {@link io.cosched.Coroutines#go} uses on a plain thread: the first started that
     * is still running, else a shared daemon one started on first use and never stopped.
     */
    public static IOManager defaultInstance() {
        return defaultRuntime();
    }

    /** {@link #defaultInstance()} as the runtime it is. */
    static IORuntime defaultRuntime() {
        for (IORuntime io : RUNNING_MANAGERS) { // a snapshot: the first in start order
            return io;
        }
        return Shared.INSTANCE;
    }

    /**
     * The running IOManager named {@code name} (of several, the first started), or the one whose {@link #key()} it
     * is, if any.
     */
    public static Optional<IOManager> running(String name) {
        for (IORuntime io : RUNNING_MANAGERS) {
            if (io.name.equals(name) || io.key.equals(name)) {
                return Optional.of(io);
            }
        }
        return Optional.empty();
    }

    /**
     * What names this IOManager and no other in the JVM, {@code <name>#<n>}: several running IOManagers may share
     * a name (one per application context, as the contexts of a test suite do), and a driver that finds its socket
     * factory's IOManager by name would otherwise get the first started.
     */
    public String key() {
        return key;
    }

    @Override
    public EventLoopGroup eventLoopGroup() {
        return group;
    }

    /**
     * A one-loop group for a server's listening socket, made on first use: accepting runs on a thread
     * that carries no coroutine, so a stuck loop cannot stop new connections from coming in; they are
     * registered with {@link #eventLoopGroup()}, whose chooser skips stuck loops.
     */
    @Override
    public synchronized EventLoopGroup acceptorGroup() {
        if (acceptor == null) {
            if (lifecycle() >= STOPPING) {
                throw rejected();
            }
            String threadName = name + "-acceptor";
            acceptor = new MultiThreadIoEventLoopGroup(
                    1,
                    (ThreadFactory) r -> {
                        Thread t = new FastThreadLocalThread(r, threadName);
                        t.setDaemon(daemon);
                        return t;
                    },
                    transport.handlerFactory());
        }
        return acceptor;
    }

    @Override
    public Transport transport() {
        return transport.kind();
    }

    @Override
    public IOTimerManager timers() {
        return timerManager;
    }

    LoopCarrier[] carriers() {
        return carriers;
    }

    @Override
    Carrier[] carrierArray() {
        return carriers;
    }

    /** Starts the loop threads; the first IOManager started also serves {@code Coroutines.go} from plain threads. */
    @Override
    public void start() {
        startLoops();
        RUNNING_MANAGERS.addIfAbsent(this);
    }

    private void startLoops() {
        if (markStarted()) {
            for (LoopCarrier c : carriers) {
                c.loop().execute(NOOP); // start the loop threads now, in index order
            }
            startWatchdog();
        }
    }

    @Override
    public boolean stop(Duration timeout) {
        RUNNING_MANAGERS.remove(this);
        return super.stop(timeout);
    }

    // ---- placement -----------------------------------------------------------------------------

    /**
     * The loop a new coroutine goes to: the caller's own loop when the caller is a coroutine (or a
     * thread started by one) or a loop thread of this IOManager; else the loop with the fewest live
     * coroutines, round-robin among equals.
     */
    @Override
    public LoopCarrier place() {
        LoopCarrier local = callersLoop();
        return local != null ? local : leastLoaded();
    }

    /** The loop of this IOManager the caller belongs to, or {@code null}. */
    @Nullable
    LoopCarrier callersLoop() {
        CoroutineImpl<?> ctx = CoroutineImpl.currentContext();
        if (ctx != null && ctx.home instanceof LoopCarrier lc && lc.runtime == this) {
            return lc;
        }
        if (Carrier.ofCurrentThread() instanceof LoopCarrier lc && lc.runtime == this) {
            return lc;
        }
        return null;
    }

    /**
     * The loop whose connections blocking I/O of the calling code should use, so that the wake-up
     * comes from the thread the caller runs on: a coroutine's home loop; any other thread gets the least
     * loaded loop. A loop thread itself (not a coroutine on it) gets none: on its own loop it would wait
     * for I/O only it can run, and on another it would hold its own loop for the call's length, two loops
     * so waiting on each other's connections holding both until the sockets time out (a blocking call in a
     * reactive handler, on every loop at once under load). It fails at once instead.
     *
     * @throws IllegalStateException on a loop thread outside any coroutine
     */
    @Override
    public int loopIndexForCaller() {
        CoroutineImpl<?> ctx = CoroutineImpl.currentContext();
        if (ctx != null && ctx.home instanceof LoopCarrier lc && lc.runtime == this) {
            return lc.index;
        }
        if (Carrier.ofCurrentThread() instanceof LoopCarrier lc && lc.runtime == this) {
            throw new IllegalStateException("blocking I/O called on event loop thread '" + lc.threadName
                    + "' outside any coroutine: the thread would wait for I/O, holding its loop (IOManager '"
                    + name + "') and everything on it meanwhile"
                    + (carriers.length == 1
                            ? " (it has no other loop, and only this thread can run the I/O)"
                            : "; two loops doing so on each other's connections hold both until the sockets time out")
                    + ". Run the caller as a coroutine (@RunAsCoroutine, IOManager.spawn) or on another thread."
                    + new CallerHint(CallerHint.RUN_AS_COROUTINE).describe());
        }
        return leastLoaded().index;
    }

    @Override
    public int currentLoopIndex() {
        LoopCarrier local = callersLoop();
        return local != null ? local.index : -1;
    }

    /** A client bootstrap on loop {@code index} with this transport's socket channels. */
    @Override
    public Bootstrap bootstrap(int index) {
        return new Bootstrap().group(carrier(index).loop()).channelFactory(transport.socketChannelFactory());
    }

    /** The loop with the fewest live coroutines, round-robin among equals; a stalled one only when all are. */
    LoopCarrier leastLoaded() {
        int n = carriers.length;
        if (n == 1) {
            return carriers[0];
        }
        int start = Math.floorMod(roundRobin.getAndIncrement(), n);
        LoopCarrier best = carriers[start];
        int bestLive = best.isStalled() ? Integer.MAX_VALUE : best.liveCoroutines();
        for (int k = 1; k < n && bestLive > 0; k++) {
            LoopCarrier c = carriers[(start + k) % n];
            int live = c.isStalled() ? Integer.MAX_VALUE : c.liveCoroutines();
            if (live < bestLive) {
                best = c;
                bestLive = live;
            }
        }
        return best;
    }

    /** Another loop that is neither stalled nor closed, the one with the least queued; else the JDK's default scheduler. */
    @Override
    RunTarget spillTarget(Carrier from) {
        LoopCarrier best = null;
        long bestDepth = Long.MAX_VALUE;
        for (LoopCarrier c : carriers) {
            if (c != from && !c.isStalled() && !c.isClosed()) {
                long depth = c.queueDepth();
                if (depth < bestDepth) {
                    best = c;
                    bestDepth = depth;
                }
            }
        }
        return best != null ? best : orphanTarget;
    }

    @Override
    public LoopCarrier carrier(int index) {
        return carriers[checkIndex(index, "event loops")];
    }

    /** Event loop {@code index}, checked against the number of loops. */
    @Override
    public EventLoop eventLoop(int index) {
        return carrier(index).loop();
    }

    @Override
    protected boolean ownsCarrier(Carrier carrier) {
        return carrier instanceof LoopCarrier lc && lc.runtime == this;
    }

    // ---- stop ----------------------------------------------------------------------------------

    @Override
    protected String kind() {
        return "IOManager";
    }

    @Override
    protected void shutDownCarriers() {
        EventLoopGroup a;
        synchronized (this) {
            a = acceptor;
        }
        if (a != null) {
            a.shutdownGracefully(0, 0, TimeUnit.NANOSECONDS)
                    .awaitUninterruptibly(LOOP_TERMINATION_NANOS, TimeUnit.NANOSECONDS);
        }
        group.shutdownGracefully(0, 0, TimeUnit.NANOSECONDS);
        if (!group.terminationFuture().awaitUninterruptibly(LOOP_TERMINATION_NANOS, TimeUnit.NANOSECONDS)) {
            LOG.log(
                    System.Logger.Level.WARNING,
                    "IOManager ''{0}'': event loops did not terminate within 10s; a loop "
                            + "thread is blocked in a task",
                    name);
        }
        closeCarriers();
    }

    /** Once the loops have terminated: hand queued continuations and sleeping coroutines' timers over. */
    private synchronized void closeCarriers() {
        if (carriersClosed || !group.isTerminated()) {
            return;
        }
        carriersClosed = true;
        int handedOver = 0;
        int timersCancelled = 0;
        for (LoopCarrier c : carriers) {
            handedOver += c.close();
            timersCancelled += c.timers.close();
        }
        if (handedOver > 0 || timersCancelled > 0) {
            LOG.log(
                    System.Logger.Level.INFO,
                    "IOManager ''{0}'' stopped: {1} queued continuations handed to the JDK''s "
                            + "default scheduler, {2} pending timers cancelled",
                    name,
                    handedOver,
                    timersCancelled);
        }
    }

    // ---- stats ---------------------------------------------------------------------------------

    @Override
    SchedulerStats.Type type() {
        return SchedulerStats.Type.IO;
    }

    @Override
    protected long timersPending() {
        long timers = 0;
        for (LoopCarrier c : carriers) {
            timers += c.timersPending();
        }
        return timers;
    }

    private static final class Shared {
        static final IORuntime INSTANCE = create();

        private static IORuntime create() {
            IORuntime io = (IORuntime)
                    IOManager.builder().name("cosched-go").daemon(true).build(); // the builder's defaults
            io.startLoops(); // not listed as running: any IOManager a user starts comes first
            return io;
        }
    }
}
