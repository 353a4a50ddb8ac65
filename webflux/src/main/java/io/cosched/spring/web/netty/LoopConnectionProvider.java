package io.cosched.spring.web.netty;

import io.cosched.IOManager;
import io.cosched.Internal;
import io.netty.resolver.AddressResolverGroup;
import java.net.SocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.Function;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.netty.Connection;
import reactor.netty.ConnectionObserver;
import reactor.netty.resources.ConnectionProvider;
import reactor.netty.transport.TransportConfig;

/**
 * Reactor Netty connection pools, one per event loop of an {@link IOManager}, for clients on those loops
 * ({@link IOManagerLoopResources}): a caller on a loop (a coroutine, by its home loop, or the loop's own thread)
 * takes and gives back connections of its loop's pool, whose connections all live on that loop, so a coroutine
 * that blocks on a {@code WebClient} call ({@code .block()}) is resumed by the loop that read the answer, and a
 * reactive caller on a loop keeps its connections there as with Reactor Netty's own resources. Any other thread
 * uses one more pool, as before. Reactor Netty's one pool would hand an idle connection of any loop to any
 * caller.
 */
@Internal
public final class LoopConnectionProvider implements ConnectionProvider {

    private final IOManager io;
    private final String name;
    private final ConnectionProvider[] loops;
    private final ConnectionProvider others;

    /**
     * @param io    the IOManager whose loops the clients run on
     * @param name  the pools' name: {@code <name>-loop<i>} for loop {@code i}'s, {@code name} for the others'
     * @param pools makes a pool from its name (for example {@code n -> ConnectionProvider.create(n, 500)})
     */
    public LoopConnectionProvider(IOManager io, String name, Function<String, ConnectionProvider> pools) {
        this.io = Objects.requireNonNull(io, "io");
        this.name = Objects.requireNonNull(name, "name");
        this.loops = new ConnectionProvider[io.threads()];
        for (int i = 0; i < loops.length; i++) {
            loops[i] = Objects.requireNonNull(pools.apply(name + "-loop" + i), "pools");
        }
        this.others = Objects.requireNonNull(pools.apply(name), "pools");
    }

    /** Pools as Spring's {@code ReactorResourceFactory} makes its one: {@code maxConnections} per host each. */
    public static LoopConnectionProvider create(IOManager io, String name, int maxConnections) {
        return new LoopConnectionProvider(io, name, n -> ConnectionProvider.create(n, maxConnections));
    }

    @Override
    public Mono<? extends Connection> acquire(
            TransportConfig config,
            ConnectionObserver connectionObserver,
            @Nullable Supplier<? extends SocketAddress> remoteAddress,
            @Nullable AddressResolverGroup<?> resolverGroup) {
        // which pool is decided where the caller subscribes: for a blocking caller that is its own thread
        return Mono.<Connection>defer(
                () -> poolOfCaller().acquire(config, connectionObserver, remoteAddress, resolverGroup));
    }

    /** The pool of the calling loop or coroutine; the others' pool elsewhere. */
    ConnectionProvider poolOfCaller() {
        int loopIndex = io.currentLoopIndex();
        return loopIndex < 0 ? others : loops[loopIndex];
    }

    /** Loop {@code index}'s pool. */
    ConnectionProvider pool(int index) {
        return loops[index];
    }

    private List<ConnectionProvider> all() {
        List<ConnectionProvider> all = new ArrayList<>(List.of(loops));
        all.add(others);
        return all;
    }

    @Override
    public void disposeWhen(SocketAddress remoteAddress) {
        all().forEach(p -> p.disposeWhen(remoteAddress));
    }

    @Override
    public Mono<Void> disposeLater() {
        return Flux.fromIterable(all())
                .flatMap(ConnectionProvider::disposeLater)
                .then();
    }

    @Override
    public boolean isDisposed() {
        return all().stream().allMatch(ConnectionProvider::isDisposed);
    }

    /** The pools' limits added up. */
    @Override
    public int maxConnections() {
        return all().stream().mapToInt(ConnectionProvider::maxConnections).sum();
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public String toString() {
        return "LoopConnectionProvider[" + name + ", " + loops.length + " loops of IOManager '" + io.name() + "']";
    }
}
