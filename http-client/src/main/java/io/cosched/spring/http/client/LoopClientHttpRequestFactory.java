package io.cosched.spring.http.client;

import io.cosched.http.client.LoopHttpClient;
import java.io.IOException;
import java.net.URI;
import java.util.Objects;
import org.springframework.http.HttpMethod;
import org.springframework.http.client.ClientHttpRequest;
import org.springframework.http.client.ClientHttpRequestFactory;

/**
 * Spring's blocking HTTP client ({@code RestClient}, {@code RestTemplate}) over a
 * {@link LoopHttpClient}: connections on an {@code IOManager}'s event loops, so a call made in a
 * coroutine is answered and resumed by that coroutine's own loop. This class only translates
 * between Spring's request and response types and the client's; timeouts, redirects, TLS, pooling
 * and the failures reported ({@code SocketTimeoutException("Read timed out")} and the like, which
 * {@code RestClient} reports as a {@code ResourceAccessException}) are the client's. Request bodies
 * are buffered. {@link #close()} closes the client.
 */
public final class LoopClientHttpRequestFactory implements ClientHttpRequestFactory, AutoCloseable {

    private final LoopHttpClient client;

    public LoopClientHttpRequestFactory(LoopHttpClient client) {
        this.client =
                Objects.requireNonNull(client, "client: null (expected: the LoopHttpClient that makes the calls)");
    }

    /** The client that makes the calls: its settings and its connection counts. */
    public LoopHttpClient client() {
        return client;
    }

    @Override
    public ClientHttpRequest createRequest(URI uri, HttpMethod httpMethod) throws IOException {
        if (client.isClosed()) {
            throw new IOException("LoopClientHttpRequestFactory is closed");
        }
        LoopHttpClient.checkUri(uri); // an http(s) URI with a host, or an IllegalArgumentException now
        return new LoopClientHttpRequest(client, uri, httpMethod);
    }

    /** Closes the client's idle connections; the factory takes no more requests. */
    @Override
    public void close() {
        client.close();
    }

    @Override
    public String toString() {
        return "LoopClientHttpRequestFactory[" + client.settingsDescription() + "]";
    }
}
