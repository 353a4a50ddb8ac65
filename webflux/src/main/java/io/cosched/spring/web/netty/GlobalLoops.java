package io.cosched.spring.web.netty;

import io.cosched.IOManager;
import io.cosched.Internal;
import java.util.concurrent.atomic.AtomicReference;
import reactor.netty.http.HttpResources;

/**
 * Reactor Netty's global HTTP resources on the IOManager's loops. A {@code WebClient} or {@code HttpClient} not made
 * from Spring Boot's builder ({@code WebClient.create()}, Spring Security's client for a {@code jwk-set-uri}, a
 * library's own client) runs on {@link HttpResources}, whose loops are otherwise Reactor Netty's own
 * {@code reactor-http-*} threads: a request waiting for such a call would go on from one of them, and they would
 * be threads the application did not ask for. Here a call opens its connection on the caller's loop, as a client
 * from Boot's builder does. One IOManager holds the global resources at a time, the last installed; closing gives
 * them back (Reactor Netty makes its own again on their next use) unless another has taken them since.
 *
 * <p>Wiring: public for the starter.
 */
@Internal
public final class GlobalLoops implements AutoCloseable {

    private static final AtomicReference<GlobalLoops> INSTALLED = new AtomicReference<>();

    private GlobalLoops() {}

    /** Makes {@code io}'s loops Reactor Netty's global HTTP loops until {@link #close()}; {@code io} must be running. */
    public static GlobalLoops install(IOManager io) {
        GlobalLoops g = new GlobalLoops();
        INSTALLED.set(g);
        // disposes the loops it replaces: Reactor Netty's own (threads start only when used), or another
        // IOManager's (whose dispose does nothing); the global connection pool is kept
        HttpResources.set(new IOManagerLoopResources(io));
        return g;
    }

    /** Whether these are still the global loops. */
    public boolean isInstalled() {
        return INSTALLED.get() == this;
    }

    @Override
    public void close() {
        if (INSTALLED.compareAndSet(this, null)) {
            // closes the global pool's connections, which live on loops about to stop; made anew on next use
            HttpResources.disposeLoopsAndConnections();
        }
    }
}
