package io.cosched.spring.boot.autoconfigure.http;

import io.cosched.IOManager;
import io.cosched.spring.http.client.reactive.LoopClientHttpConnector;
import java.time.Duration;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.http.client.HttpClientSettings;
import org.springframework.boot.http.client.HttpCookieHandling;
import org.springframework.boot.http.client.reactive.ClientHttpConnectorBuilder;
import org.springframework.http.client.reactive.ClientHttpConnector;

/**
 * Spring Boot's {@code ClientHttpConnectorBuilder} (what its {@code WebClient.Builder} and
 * {@code ClientHttpConnector} are built with), wrapped: the connector it builds is a
 * {@link LoopClientHttpConnector} whose calls from coroutines go over a {@code LoopHttpClient} made from
 * the same {@code spring.http.clients.*} settings, and whose every other call goes to the connector the
 * wrapped builder makes. With {@code spring.http.clients.cookie-handling=enable} (this client keeps no
 * cookies) the wrapped builder's connector is used alone.
 */
public final class LoopClientHttpConnectorBuilder implements ClientHttpConnectorBuilder<ClientHttpConnector> {

    private static final Log LOG = LogFactory.getLog(LoopClientHttpConnectorBuilder.class);

    private final ClientHttpConnectorBuilder<?> wrapped;
    private final IOManager io;
    private final Duration idleTimeout;

    /**
     * @param wrapped     the builder of the connector every call that is not a coroutine's goes to
     * @param io          the IOManager whose loops carry the coroutines' connections
     * @param idleTimeout how long an idle connection is kept for reuse
     */
    public LoopClientHttpConnectorBuilder(ClientHttpConnectorBuilder<?> wrapped, IOManager io, Duration idleTimeout) {
        this.wrapped = wrapped;
        this.io = io;
        this.idleTimeout = idleTimeout;
    }

    /** The builder of the connector every call that is not a coroutine's goes to. */
    public ClientHttpConnectorBuilder<?> wrapped() {
        return wrapped;
    }

    @Override
    public ClientHttpConnector build(@Nullable HttpClientSettings settings) {
        HttpClientSettings s = settings == null ? HttpClientSettings.defaults() : settings;
        ClientHttpConnector other = wrapped.build(s);
        if (s.cookieHandling() == HttpCookieHandling.ENABLE) {
            LOG.info("WebClient calls from coroutines stay on " + other + ": spring.http.clients.cookie-handling is "
                    + "enable, and cosched's loop HTTP client keeps no cookies (docs/io.md)");
            return other;
        }
        return new LoopClientHttpConnector(LoopHttpClientSettings.client(io, idleTimeout, s), other);
    }

    @Override
    public String toString() {
        return "LoopClientHttpConnectorBuilder[" + io.name() + ", otherwise " + wrapped + "]";
    }
}
