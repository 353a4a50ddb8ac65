package io.cosched.spring.boot.autoconfigure.http;

import io.cosched.IOManager;
import io.cosched.http.client.LoopHttpClient;
import io.cosched.spring.http.client.LoopClientHttpRequestFactory;
import java.time.Duration;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.http.client.ClientHttpRequestFactoryBuilder;
import org.springframework.boot.http.client.HttpClientSettings;
import org.springframework.boot.http.client.HttpCookieHandling;

/**
 * Spring Boot's way to choose the request factory of {@code RestClient.Builder},
 * {@code RestTemplateBuilder} and HTTP service clients: maps Boot's {@code spring.http.clients.*}
 * settings (connect and read timeouts, redirects, SSL bundle, address filter) onto a
 * {@link LoopHttpClient} and hands it to Spring as a {@link LoopClientHttpRequestFactory}.
 */
public final class LoopClientHttpRequestFactoryBuilder
        implements ClientHttpRequestFactoryBuilder<LoopClientHttpRequestFactory> {

    private final IOManager io;
    private final Duration idleTimeout;

    /**
     * @param io          the IOManager whose loops carry the connections
     * @param idleTimeout how long an idle connection is kept for reuse
     */
    public LoopClientHttpRequestFactoryBuilder(IOManager io, Duration idleTimeout) {
        this.io = io;
        this.idleTimeout = idleTimeout;
    }

    /**
     * @throws IllegalStateException when the settings ask for cookie handling
     *         ({@code spring.http.clients.cookie-handling=enable}): this client keeps no cookies
     */
    @Override
    public LoopClientHttpRequestFactory build(@Nullable HttpClientSettings settings) {
        HttpClientSettings s = settings == null ? HttpClientSettings.defaults() : settings;
        if (s.cookieHandling() == HttpCookieHandling.ENABLE) {
            throw new IllegalStateException("spring.http.clients.cookie-handling: enable (cosched's loop HTTP client "
                    + "keeps no cookies; use enable-when-possible or disable, or set cosched.http.client.enabled=false "
                    + "for Spring Boot's default client)");
        }
        return new LoopClientHttpRequestFactory(LoopHttpClientSettings.client(io, idleTimeout, s));
    }

    @Override
    public String toString() {
        return "LoopClientHttpRequestFactoryBuilder[" + io.name() + "]";
    }
}
