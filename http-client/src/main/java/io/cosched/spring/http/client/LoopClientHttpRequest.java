package io.cosched.spring.http.client;

import io.cosched.http.client.LoopHttpClient;
import io.netty.handler.codec.http.DefaultHttpHeaders;
import java.io.IOException;
import java.net.URI;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpMethod;
import org.springframework.http.client.AbstractBufferingClientHttpRequest;
import org.springframework.http.client.ClientHttpResponse;

/** One request: its body buffered by Spring, its headers and method handed to the client as Netty's. */
final class LoopClientHttpRequest extends AbstractBufferingClientHttpRequest {

    private final LoopHttpClient client;
    private final URI uri;
    private final HttpMethod method;

    LoopClientHttpRequest(LoopHttpClient client, URI uri, HttpMethod method) {
        this.client = client;
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
        DefaultHttpHeaders h = new DefaultHttpHeaders();
        headers.forEach((name, values) -> {
            for (String v : values) {
                h.add(name, v);
            }
        });
        io.netty.handler.codec.http.HttpMethod m = io.netty.handler.codec.http.HttpMethod.valueOf(method.name());
        return new LoopClientHttpResponse(client.exchange(m, uri, h, bufferedOutput));
    }
}
