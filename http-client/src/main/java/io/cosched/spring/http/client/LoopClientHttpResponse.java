package io.cosched.spring.http.client;

import io.cosched.http.client.LoopHttpResponse;
import java.io.InputStream;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.client.ClientHttpResponse;

/** A {@link LoopHttpResponse} as Spring's response: the same body stream, headers copied on first use. */
final class LoopClientHttpResponse implements ClientHttpResponse {

    private final LoopHttpResponse response;
    private @Nullable HttpHeaders headers;

    LoopClientHttpResponse(LoopHttpResponse response) {
        this.response = response;
    }

    @Override
    public HttpStatusCode getStatusCode() {
        return HttpStatusCode.valueOf(response.status());
    }

    @Override
    public String getStatusText() {
        return response.reason();
    }

    @Override
    public HttpHeaders getHeaders() {
        HttpHeaders h = headers;
        if (h == null) {
            h = new HttpHeaders();
            for (Map.Entry<String, String> e : response.headers()) {
                h.add(e.getKey(), e.getValue());
            }
            headers = h;
        }
        return h;
    }

    @Override
    public InputStream getBody() {
        return response.body();
    }

    @Override
    public void close() {
        response.close();
    }
}
