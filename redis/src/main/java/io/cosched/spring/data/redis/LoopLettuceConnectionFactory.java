package io.cosched.spring.data.redis;

import io.cosched.IOManager;
import io.cosched.redis.LoopEventLoopGroupProvider;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;
import java.lang.reflect.Field;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;
import org.springframework.core.task.AsyncTaskExecutor;
import org.springframework.data.redis.connection.RedisConfiguration;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisSentinelConfiguration;
import org.springframework.data.redis.connection.RedisSocketConfiguration;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnection.PipeliningFlushPolicy;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * A Spring Data Redis {@link LettuceConnectionFactory} that gives a coroutine a connection of its own event
 * loop: behind it one Lettuce client per loop of an {@link IOManager}, each with its connections on that loop
 * ({@link LoopEventLoopGroupProvider}), so the loop that reads a reply is the thread that resumes the coroutine
 * waiting for it (connections never migrate). With the native connection shared (the default),
 * each loop has one shared connection; what Spring Data Redis gives a connection of its own (blocking pops,
 * {@code MULTI}/{@code EXEC}, pipelines with a dedicated connection, pooled connections) comes from the
 * caller's loop too, from that loop's connection pool when pooling is configured (the connection pool's sizes split over the loops).
 *
 * <p>Everything else is this factory as configured, on the client resources it was given: calls from outside
 * cosched (plain threads, the Redis health check, message listener containers), reactive connections, pub/sub
 * listened to from outside a coroutine, and a loop thread of an IOManager with one loop, which would wait for
 * a reply only it can read. So code that is not a coroutine sees Lettuce as it was.
 *
 * <p>Standalone, Sentinel and Unix-socket configurations qualify; Redis Cluster and static master/replica do
 * not ({@link #unsupportedReason}). The per-loop clients start with this factory and stop with it; the
 * IOManager must be running by the first call from a coroutine.
 */
public class LoopLettuceConnectionFactory extends LettuceConnectionFactory {

    private final IOManager io;
    private final RedisConfiguration configuration; // Spring Data Redis has no getter for it
    private final Lock lock = new ReentrantLock(); // start and stop of the per-loop factories
    private PipeliningFlushPolicy pipeliningFlushPolicy = PipeliningFlushPolicy.flushEachCommand();
    private volatile LettuceConnectionFactory @Nullable [] loops;
    private @Nullable ClientResources @Nullable [] loopResources; // the per-loop clients', shut down with them
    private @Nullable ClientResources ownResources;

    /**
     * @param configuration       where Redis is: standalone, Sentinel or a Unix socket
     * @param clientConfiguration how to talk to it; its client resources, if any, are shared with the per-loop
     *                            clients (their event loops excepted)
     * @param io                  the IOManager whose loops carry the per-loop connections
     * @throws IllegalArgumentException if the configuration does not qualify ({@link #unsupportedReason})
     */
    public LoopLettuceConnectionFactory(
            RedisConfiguration configuration, LettuceClientConfiguration clientConfiguration, IOManager io) {
        super(configuration, clientConfiguration);
        this.io = io;
        this.configuration = checked(configuration, io);
    }

    /**
     * For a standalone Redis: as the other constructor, and {@link #getStandaloneConfiguration()} reports
     * {@code configuration} (as with Spring Data Redis's own standalone constructor).
     */
    public LoopLettuceConnectionFactory(
            RedisStandaloneConfiguration configuration, LettuceClientConfiguration clientConfiguration, IOManager io) {
        super(configuration, clientConfiguration);
        this.io = io;
        this.configuration = checked(configuration, io);
    }

    private static RedisConfiguration checked(RedisConfiguration configuration, IOManager io) {
        String reason = unsupportedReason(configuration, Objects.requireNonNull(io, "io"));
        if (reason != null) {
            throw new IllegalArgumentException("configuration: " + reason);
        }
        return configuration;
    }

    /**
     * A factory with {@code factory}'s configuration and settings (sharing, validation, eager initialization,
     * pipeline and transaction result conversion, pipelining flush policy, executor, lifecycle phase and
     * start-up flags), for a factory that has not started yet, such as Spring Boot's before its initialization.
     *
     * @throws IllegalArgumentException if it does not qualify ({@link #unsupportedReason(LettuceConnectionFactory, IOManager)})
     */
    public static LoopLettuceConnectionFactory from(LettuceConnectionFactory factory, IOManager io) {
        String reason = unsupportedReason(factory, io);
        if (reason != null) {
            throw new IllegalArgumentException("factory: " + reason);
        }
        RedisConfiguration configuration = Objects.requireNonNull(configurationOf(factory));
        LoopLettuceConnectionFactory loop = configuration instanceof RedisStandaloneConfiguration standalone
                ? new LoopLettuceConnectionFactory(standalone, factory.getClientConfiguration(), io)
                : new LoopLettuceConnectionFactory(configuration, factory.getClientConfiguration(), io);
        loop.setShareNativeConnection(factory.getShareNativeConnection());
        loop.setValidateConnection(factory.getValidateConnection());
        loop.setEagerInitialization(factory.getEagerInitialization());
        loop.setConvertPipelineAndTxResults(factory.getConvertPipelineAndTxResults());
        loop.setPhase(factory.getPhase());
        loop.setAutoStartup(factory.isAutoStartup());
        loop.setEarlyStartup(factory.isEarlyStartup());
        if (read(factory, "pipeliningFlushPolicy") instanceof PipeliningFlushPolicy policy) {
            loop.setPipeliningFlushPolicy(policy);
        }
        if (read(factory, "executor") instanceof AsyncTaskExecutor executor) {
            loop.setExecutor(executor);
        }
        return loop;
    }

    /**
     * Why {@code factory} cannot be replaced by a {@link LoopLettuceConnectionFactory}, or {@code null}: it is a
     * subclass (whose behaviour a copy would lose), it has started, or its configuration does not qualify
     * ({@link #unsupportedReason(RedisConfiguration, IOManager)}).
     */
    public static @Nullable String unsupportedReason(LettuceConnectionFactory factory, IOManager io) {
        if (factory.getClass() != LettuceConnectionFactory.class) {
            return "it is a " + factory.getClass().getName() + ", not a plain LettuceConnectionFactory";
        }
        if (factory.isRunning()) {
            return "it has started already";
        }
        RedisConfiguration configuration = configurationOf(factory);
        if (configuration == null) {
            return "its Redis configuration cannot be read (a Spring Data Redis this version of cosched does not know)";
        }
        return unsupportedReason(configuration, io);
    }

    /**
     * Why connections of {@code configuration} cannot live one per loop, or {@code null}: Redis Cluster (the
     * cluster client keeps a connection per node and routes by slot itself) and static master/replica (one
     * connection to several nodes) do not; nor does an IOManager whose transport Lettuce does not use.
     */
    public static @Nullable String unsupportedReason(RedisConfiguration configuration, IOManager io) {
        if (!(configuration instanceof RedisStandaloneConfiguration
                || configuration instanceof RedisSentinelConfiguration
                || configuration instanceof RedisSocketConfiguration)) {
            return "it is a " + configuration.getClass().getSimpleName() + " (Redis Cluster and static master/replica "
                    + "keep Lettuce's own routing; standalone, Sentinel and Unix-socket configurations go on the loops)";
        }
        return LoopEventLoopGroupProvider.unsupportedReason(io);
    }

    // Spring Data Redis keeps the configuration a factory was made with to itself; it is read (never written) so
    // that Spring Boot's factory can be copied before it starts. Any failure means "cannot be read".
    private static @Nullable Object read(LettuceConnectionFactory factory, String field) {
        try {
            Field f = LettuceConnectionFactory.class.getDeclaredField(field);
            f.setAccessible(true);
            return f.get(factory);
        } catch (ReflectiveOperationException | RuntimeException e) {
            return null;
        }
    }

    private static @Nullable RedisConfiguration configurationOf(LettuceConnectionFactory factory) {
        return read(factory, "configuration") instanceof RedisConfiguration c ? c : null;
    }

    /** The IOManager whose loops carry the per-loop connections. */
    public IOManager ioManager() {
        return io;
    }

    @Override
    public void setPipeliningFlushPolicy(PipeliningFlushPolicy pipeliningFlushPolicy) {
        super.setPipeliningFlushPolicy(pipeliningFlushPolicy);
        this.pipeliningFlushPolicy = pipeliningFlushPolicy;
    }

    @Override
    public void start() {
        lock.lock();
        try {
            super.start();
            if (loops == null && isRunning()) {
                loops = createLoops();
            }
        } finally {
            lock.unlock();
        }
    }

    private LettuceConnectionFactory[] createLoops() {
        ClientResources base = getClientConfiguration().getClientResources().orElse(null);
        if (base == null) {
            // the main client makes resources of its own; the per-loop clients share one set made here
            base = DefaultClientResources.builder()
                    .eventLoopGroupProvider(LoopEventLoopGroupProvider.allLoops(io))
                    .build();
            ownResources = base;
        }
        int n = io.threads();
        LettuceConnectionFactory[] made = new LettuceConnectionFactory[n];
        ClientResources[] resources = new ClientResources[n];
        loopResources = resources;
        for (int i = 0; i < n; i++) {
            resources[i] = LoopEventLoopGroupProvider.resourcesOnLoop(base, io, i);
            LettuceConnectionFactory f = new LettuceConnectionFactory(
                    configuration, LoopClientConfigurations.onLoop(getClientConfiguration(), resources[i], n, i));
            f.setShareNativeConnection(getShareNativeConnection());
            f.setValidateConnection(getValidateConnection());
            f.setConvertPipelineAndTxResults(getConvertPipelineAndTxResults());
            f.setPipeliningFlushPolicy(pipeliningFlushPolicy);
            f.start();
            made[i] = f;
        }
        return made;
    }

    @Override
    public void stop() {
        lock.lock();
        try {
            eachLoop(loops, LettuceConnectionFactory::destroy);
            loops = null;
            // nothing of their own to wait for: all they hold is shared
            eachLoop(loopResources, r -> r.shutdown(0, 0, TimeUnit.MILLISECONDS));
            loopResources = null;
            super.stop();
            ClientResources own = ownResources;
            ownResources = null;
            if (own != null) {
                own.shutdown(0, getClientConfiguration().getShutdownTimeout().toMillis(), TimeUnit.MILLISECONDS);
            }
        } finally {
            lock.unlock();
        }
    }

    /**
     * A connection of the calling coroutine's loop; for any other caller, this factory's own (see the class
     * comment).
     */
    @Override
    public RedisConnection getConnection() {
        LettuceConnectionFactory own = factoryOfCaller();
        return own != null ? own.getConnection() : super.getConnection();
    }

    /**
     * The factory of the caller's loop: a coroutine's (or a virtual thread's it started) own; for a loop thread
     * outside any coroutine, which would wait for a reply only it can read, the next loop's, as
     * {@link IOManager#loopIndexForCaller()} picks; {@code null} for a loop thread of a one-loop IOManager and for
     * any other thread. Called on every {@link #getConnection()}: one look at the caller.
     */
    @Nullable
    LettuceConnectionFactory factoryOfCaller() {
        LettuceConnectionFactory[] l = loops;
        if (l == null) {
            return null;
        }
        int loopIndex = io.currentLoopIndex();
        if (loopIndex < 0) {
            return null;
        }
        if (Thread.currentThread().isVirtual()) {
            return l[loopIndex];
        }
        return l.length > 1 ? l[(loopIndex + 1) % l.length] : null;
    }

    /** Loop {@code index}'s factory, while this one runs. */
    @Nullable
    LettuceConnectionFactory loopFactory(int index) {
        LettuceConnectionFactory[] l = loops;
        return l == null ? null : l[index];
    }

    /** Also each loop's shared connection. */
    @Override
    public void resetConnection() {
        super.resetConnection();
        eachLoop(loops, LettuceConnectionFactory::resetConnection);
    }

    /** Also each loop's shared connection. */
    @Override
    public void validateConnection() {
        super.validateConnection();
        eachLoop(loops, LettuceConnectionFactory::validateConnection);
    }

    private static <T> void eachLoop(T @Nullable [] perLoop, Consumer<T> action) {
        if (perLoop != null) {
            for (T t : perLoop) {
                if (t != null) { // null past a loop whose making failed
                    action.accept(t);
                }
            }
        }
    }

    @Override
    public String toString() {
        return "LoopLettuceConnectionFactory[" + configuration.getClass().getSimpleName() + ", " + io.threads()
                + " loops of IOManager '" + io.name() + "']";
    }
}
