package io.cosched.internal;

import io.cosched.IOManager;
import io.cosched.Scheduler;

import java.util.concurrent.atomic.AtomicReference;

/**
 * The scheduler {@link io.cosched.Coroutines#go} uses from a thread that belongs to no scheduler:
 * the first IOManager started that is still running, else one shared daemon IOManager named
 * {@code cosched-go}, created on first use and never stopped.
 */
public final class DefaultScheduler {

    private static final AtomicReference<IOManager> STARTED = new AtomicReference<>();

    private DefaultScheduler() {
    }

    public static void offer(IOManager io) {
        STARTED.compareAndSet(null, io);
    }

    public static void withdraw(IOManager io) {
        STARTED.compareAndSet(io, null);
    }

    public static Scheduler get() {
        IOManager io = STARTED.get();
        return io != null ? io : Shared.INSTANCE;
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
