package io.cosched.spring.boot.autoconfigure.http;

import io.cosched.IOManager;
import io.cosched.spring.http.client.LoopClientHttpRequestFactory;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.http.client.ClientHttpRequestFactoryBuilder;
import org.springframework.boot.http.client.HttpClientSettings;
import org.springframework.boot.http.client.HttpCookieHandling;
import org.springframework.boot.http.client.HttpRedirects;
import org.springframework.boot.http.client.InetAddressFilter;
import org.springframework.boot.ssl.SslBundle;
import org.springframework.boot.ssl.SslOptions;

import java.time.Duration;

/**
 * Spring Boot's way to choose the request factory of {@code RestClient.Builder},
 * {@code RestTemplateBuilder} and HTTP service clients: builds a {@link LoopClientHttpRequestFactory}
 * and applies Boot's {@code spring.http.clients.*} settings to it (connect and read timeouts,
 * redirects, SSL bundle, address filter).
 */
public final class LoopClientHttpRequestFactoryBuilder implements ClientHttpRequestFactoryBuilder<LoopClientHttpRequestFactory> {

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
        LoopClientHttpRequestFactory factory = new LoopClientHttpRequestFactory(io);
        factory.setIdleTimeout(idleTimeout);
        if (s.connectTimeout() != null) {
            factory.setConnectTimeout(s.connectTimeout());
        }
        factory.setReadTimeout(s.readTimeout());
        factory.setFollowRedirects(s.redirects() != HttpRedirects.DONT_FOLLOW);
        SslBundle ssl = s.sslBundle();
        if (ssl != null) {
            factory.setSslContext(ssl.createSslContext());
            SslOptions options = ssl.getOptions();
            factory.setSslProtocols(options.getEnabledProtocols());
            factory.setSslCiphers(options.getCiphers());
        }
        InetAddressFilter filter = s.inetAddressFilter();
        if (filter != null) {
            factory.setAddressFilter(filter::matches);
        }
        return factory;
    }

    @Override
    public String toString() {
        return "LoopClientHttpRequestFactoryBuilder[" + io.name() + "]";
    }
}
