package io.cosched.internal;

import io.cosched.IOManager;
import io.cosched.Scheduler;

import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The running IOManagers, for code that cannot be handed one: {@link io.cosched.Coroutines#go} from
 * a thread that belongs to no scheduler uses the first IOManager started that is still running,
 * else one shared daemon IOManager named {@code cosched-go}, created on first use and never stopped;
 * a socket factory that a driver instantiates by class name finds its IOManager by name.
 */
public final class DefaultScheduler {

    private static final AtomicReference<IOManager> STARTED = new AtomicReference<>();
    private static final CopyOnWriteArrayList<IOManager> RUNNING = new CopyOnWriteArrayList<>(); // in start order

    private DefaultScheduler() {
    }

    public static void offer(IOManager io) {
        STARTED.compareAndSet(null, io);
        RUNNING.addIfAbsent(io);
    }

    public static void withdraw(IOManager io) {
        STARTED.compareAndSet(io, null);
        RUNNING.remove(io);
    }

    public static Scheduler get() {
        return io();
    }

    /** The first IOManager started and still running, else the shared one. */
    public static IOManager io() {
        IOManager io = STARTED.get();
        return io != null ? io : Shared.INSTANCE;
    }

    /** The running IOManager named {@code name} (of several, the first started), or {@code null}. */
    public static IOManager running(String name) {
        for (IOManager io : RUNNING) {
            if (io.name().equals(name)) {
                return io;
            }
        }
        return null;
    }

    private static final class Shared {
        static final IOManager INSTANCE = create();

        private static IOManager create() {
            IOManager io = IOManager.builder().name("cosched-go").daemon(true).build();
            io.start();
            DefaultScheduler.withdraw(io); // a user IOManager started later should take over
            return io;
        }
    }
}
