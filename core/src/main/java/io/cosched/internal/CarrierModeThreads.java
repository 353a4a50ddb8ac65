package io.cosched.internal;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.reflect.Constructor;
import java.lang.reflect.Field;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;

/**
 * Carrier mode through the JDK's package-private {@code ThreadBuilders.VirtualThreadBuilder(Executor)}
 * constructor (JDK 21 through 25), reachable with {@code --add-opens java.base/java.lang=ALL-UNNAMED}.
 */
final class CarrierModeThreads extends CoroutineThreads {

    private final MethodHandle newBuilder; // (Executor) -> Thread.Builder.OfVirtual
    private final MethodHandle schedulerOf; // (Thread) -> Executor, for a virtual thread
    private final Executor orphans;

    private CarrierModeThreads(MethodHandle newBuilder, MethodHandle schedulerOf, Executor orphans) {
        super(null);
        this.newBuilder = newBuilder;
        this.schedulerOf = schedulerOf;
        this.orphans = orphans;
    }

    /** Finds the JDK internals and proves they work by running one virtual thread on an executor of ours. */
    static CarrierModeThreads probe() throws ReflectiveOperationException {
        Class<?> builderClass = Class.forName("java.lang.ThreadBuilders$VirtualThreadBuilder");
        Constructor<?> ctor = builderClass.getDeclaredConstructor(Executor.class);
        ctor.setAccessible(true); // throws InaccessibleObjectException without the add-opens flag
        MethodHandles.Lookup lookup = MethodHandles.lookup();
        MethodHandle newBuilder = lookup.unreflectConstructor(ctor)
                .asType(MethodType.methodType(Thread.Builder.OfVirtual.class, Executor.class));

        Class<?> vthreadClass = Class.forName("java.lang.VirtualThread");
        Field schedulerField = vthreadClass.getDeclaredField("scheduler");
        schedulerField.setAccessible(true);
        MethodHandle schedulerOf =
                lookup.unreflectGetter(schedulerField).asType(MethodType.methodType(Executor.class, Thread.class));

        Executor orphans;
        try {
            Field defaultScheduler = vthreadClass.getDeclaredField("DEFAULT_SCHEDULER");
            defaultScheduler.setAccessible(true);
            orphans = (Executor) defaultScheduler.get(null);
        } catch (ReflectiveOperationException | RuntimeException e) {
            orphans = platformOrphanPool();
        }

        CarrierModeThreads threads = new CarrierModeThreads(newBuilder, schedulerOf, orphans);
        threads.selfTest();
        return threads;
    }

    private void selfTest() {
        AtomicInteger submissions = new AtomicInteger();
        ExecutorService carrier = Executors.newSingleThreadExecutor(
                r -> Thread.ofPlatform().daemon().name("cosched-probe").unstarted(r));
        try {
            Executor scheduler = task -> {
                submissions.incrementAndGet();
                carrier.execute(task);
            };
            CountDownLatch ran = new CountDownLatch(1);
            Executor[] seen = new Executor[1];
            Thread t = newThread(scheduler, () -> {
                seen[0] = currentScheduler();
                Thread.yield(); // a second submission: the continuation comes back to us
                ran.countDown();
            });
            t.start();
            if (!ran.await(10, TimeUnit.SECONDS)) {
                throw new IllegalStateException("a virtual thread on a custom executor did not run within 10s");
            }
            if (seen[0] != scheduler || submissions.get() < 2) {
                throw new IllegalStateException(
                        "virtual thread scheduler not honoured (submissions=" + submissions.get() + ")");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while probing carrier mode", e);
        } finally {
            carrier.shutdown();
        }
    }

    private static Executor platformOrphanPool() {
        AtomicInteger n = new AtomicInteger();
        return Executors.newCachedThreadPool(r -> Thread.ofPlatform()
                .daemon()
                .name("cosched-orphan-" + n.getAndIncrement())
                .unstarted(r));
    }

    @Override
    public Thread newThread(Executor scheduler, Runnable body) {
        try {
            Thread.Builder.OfVirtual builder = (Thread.Builder.OfVirtual) newBuilder.invokeExact(scheduler);
            return builder.unstarted(body);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable e) {
            throw new IllegalStateException(e);
        }
    }

    @Override
    public @Nullable Executor currentScheduler() {
        Thread t = Thread.currentThread();
        if (!t.isVirtual()) {
            return null;
        }
        try {
            return (Executor) schedulerOf.invokeExact(t);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable e) {
            throw new IllegalStateException(e);
        }
    }

    @Override
    public Executor orphanExecutor() {
        return orphans;
    }
}
