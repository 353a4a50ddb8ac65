package io.cosched.spring.http.client;

import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpMethod;
import org.springframework.http.client.AbstractBufferingClientHttpRequest;
import org.springframework.http.client.ClientHttpResponse;

import java.io.IOException;
import java.net.URI;
import java.util.Objects;

/** One request: its body buffered by Spring, sent whole, and redirects followed as configured. */
final class LoopClientHttpRequest extends AbstractBufferingClientHttpRequest {

    private final LoopClientHttpRequestFactory factory;
    private final URI uri;
    private final HttpMethod method;

    LoopClientHttpRequest(LoopClientHttpRequestFactory factory, URI uri, HttpMethod method) {
        this.factory = factory;
        this.uri = uri;
        this.method = method;
    }

    @Override
    public HttpMethod getMethod() {
        return method;
    }

    @Override
    public URI getURI() {
        return uri;
    }

    @Override
    protected ClientHttpResponse executeInternal(HttpHeaders headers, byte[] bufferedOutput) throws IOException {
        HttpMethod m = method;
        URI u = uri;
        HttpHeaders h = headers;
        byte[] body = bufferedOutput;
        for (int redirects = 0; ; redirects++) {
            LoopClientHttpResponse response = factory.exchange(m, u, h, body);
            URI next = redirects < LoopClientHttpRequestFactory.MAX_REDIRECTS && factory.followsRedirects()
                    ? redirectTarget(u, response) : null;
            if (next == null) {
                return response;
            }
            int code = response.getStatusCode().value();
            response.close();
            boolean toGet = code == 303 && m != HttpMethod.HEAD || (code == 301 || code == 302) && m == HttpMethod.POST;
            h = HttpHeaders.copyOf(h);
            h.remove(HttpHeaders.HOST);
            if (toGet) {
                m = HttpMethod.GET;
                body = new byte[0];
                h.remove(HttpHeaders.CONTENT_LENGTH);
                h.remove(HttpHeaders.CONTENT_TYPE);
            }
            if (!sameOrigin(u, next)) {
                // credentials were meant for the first server only
                h.remove(HttpHeaders.AUTHORIZATION);
                h.remove(HttpHeaders.PROXY_AUTHORIZATION);
                h.remove(HttpHeaders.COOKIE);
            }
            u = next;
        }
    }

    /** Where a redirect answer points, or {@code null} when it is not one to follow. */
    private static URI redirectTarget(URI from, LoopClientHttpResponse response) {
        int code = response.getStatusCode().value();
        if (code != 301 && code != 302 && code != 303 && code != 307 && code != 308) {
            return null;
        }
        String location = response.getHeaders().getFirst(HttpHeaders.LOCATION);
        if (location == null || location.isBlank()) {
            return null;
        }
        URI next;
        try {
            next = from.resolve(location.trim());
        } catch (IllegalArgumentException malformed) {
            return null; // handed to the caller as it is
        }
        String scheme = next.getScheme();
        if (!"http".equalsIgnoreCase(scheme) && !"https".equalsIgnoreCase(scheme) || next.getHost() == null) {
            return null;
        }
        if ("https".equalsIgnoreCase(from.getScheme()) && "http".equalsIgnoreCase(scheme)) {
            return null; // never from TLS to plain text
        }
        return next;
    }

    private static boolean sameOrigin(URI a, URI b) {
        HttpConnection.Key ka = HttpConnection.Key.of(a);
        HttpConnection.Key kb = HttpConnection.Key.of(b);
        return Objects.equals(ka, kb);
    }
}
