package io.cosched.spring.boot.autoconfigure.http;

import io.cosched.IOManager;
import io.cosched.http.client.LoopHttpClient;
import java.time.Duration;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.http.client.HttpClientSettings;
import org.springframework.boot.http.client.HttpRedirects;
import org.springframework.boot.http.client.InetAddressFilter;
import org.springframework.boot.ssl.SslBundle;
import org.springframework.boot.ssl.SslOptions;

/**
 * Spring Boot's {@code spring.http.clients.*} settings (connect and read timeouts, redirects, SSL bundle,
 * address filter) as a {@link LoopHttpClient}: one mapping for the blocking request factory and the
 * {@code WebClient} connector alike.
 */
final class LoopHttpClientSettings {

    private LoopHttpClientSettings() {}

    static LoopHttpClient client(IOManager io, Duration idleTimeout, @Nullable HttpClientSettings settings) {
        HttpClientSettings s = settings == null ? HttpClientSettings.defaults() : settings;
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
        return client.build();
    }
}
