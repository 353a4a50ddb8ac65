package io.cosched.spring.boot.autoconfigure.http;

import io.cosched.IOManager;
import io.cosched.http.client.LoopHttpClient;
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
 * {@code RestTemplateBuilder} and HTTP service clients: maps Boot's {@code spring.http.clients.*}
 * settings (connect and read timeouts, redirects, SSL bundle, address filter) onto a
 * {@link LoopHttpClient} and hands it to Spring as a {@link LoopClientHttpRequestFactory}.
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
        LoopHttpClient.Builder client = LoopHttpClient.builder(io)
                .idleTimeout(idleTimeout)
                .readTimeout(s.readTimeout())
                .followRedirects(s.redirects() != HttpRedirects.DONT_FOLLOW);
        if (s.connectTimeout() != null) {
            client.connectTimeout(s.connectTimeout());
        }
        SslBundle ssl = s.sslBundle();
        if (ssl != null) {
            SslOptions options = ssl.getOptions();
            client.sslContext(ssl.createSslContext())
                    .sslProtocols(options.getEnabledProtocols())
                    .sslCiphers(options.getCiphers());
        }
        InetAddressFilter filter = s.inetAddressFilter();
        if (filter != null) {
            client.addressFilter(filter::matches);
        }
        return new LoopClientHttpRequestFactory(client.build());
    }

    @Override
    public String toString() {
        return "LoopClientHttpRequestFactoryBuilder[" + io.name() + "]";
    }
}
