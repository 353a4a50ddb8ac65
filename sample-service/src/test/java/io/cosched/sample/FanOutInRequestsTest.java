package io.cosched.sample;

import static org.assertj.core.api.Assertions.assertThat;

import io.opentelemetry.context.Context;
import io.opentelemetry.sdk.trace.ReadWriteSpan;
import io.opentelemetry.sdk.trace.ReadableSpan;
import io.opentelemetry.sdk.trace.SpanProcessor;
import io.opentelemetry.sdk.trace.data.SpanData;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;

/**
 * Fan-out inside the service's requests ({@code GET /api/accounts/{id}/overview}: two transactions at once in a
 * {@code TaskScope}), with its own security (HTTP basic, {@code @PreAuthorize} on the service) and tracing on
 * (Micrometer Tracing over OpenTelemetry, every request sampled): each subtask passes the service's method security
 * with the caller's authentication, is a span whose parent is the request's, and a failure in a subtask is answered
 * as the same failure in the handler would be.
 */
@SpringBootTest(
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {
            "cosched.io.threads=1",
            "spring.datasource.url=jdbc:h2:mem:fanout;DB_CLOSE_DELAY=-1",
            "management.tracing.sampling.probability=1.0"
        },
        classes = {SampleService.class, FanOutInRequestsTest.Spans.class})
@Timeout(120)
class FanOutInRequestsTest {

    private static final String USER = Api.basic("user", "secret");

    @LocalServerPort
    int port;

    Api api;

    @BeforeEach
    void client() {
        api = new Api(port);
        Spans.ended.clear();
    }

    @Test
    void eachSubtaskPassesMethodSecurityAsTheCallerAndIsASpanUnderTheRequest() throws Exception {
        HttpResponse<String> r = api.get("/api/accounts/1/overview", USER);
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        assertThat(r.body()).contains("\"account\":{\"id\":1", "\"deposits\":");
        SpanData request = awaitSpan("http get /api/accounts/{id}/overview");
        // the handler runs inside Spring Security's "secured request" observation: the span current in the handler
        SpanData handler = awaitSpan("secured request");
        List<SpanData> forks = Spans.ended.stream()
                .filter(s -> s.getName().equals("fork overview"))
                .toList();
        String tree = Spans.ended.stream()
                .map(s -> s.getName() + " " + s.getSpanId() + " <- " + s.getParentSpanId())
                .toList()
                .toString();
        assertThat(handler.getTraceId()).as(tree).isEqualTo(request.getTraceId());
        assertThat(forks).as(tree).hasSize(2).allSatisfy(f -> {
            assertThat(f.getTraceId()).isEqualTo(request.getTraceId());
            assertThat(f.getParentSpanId()).isEqualTo(handler.getSpanId());
            assertThat(f.getAttributes().asMap().toString()).contains("cosched.scope=overview");
        });
        // each subtask's @PreAuthorize check ran in it, as the caller
        List<String> forkIds = forks.stream().map(SpanData::getSpanId).toList();
        assertThat(Spans.ended.stream()
                        .filter(s -> s.getName().equals("authorize method"))
                        .map(SpanData::getParentSpanId))
                .as(tree)
                .containsExactlyInAnyOrderElementsOf(forkIds);
    }

    @Test
    void aSubtasksFailureIsAnsweredAsTheHandlersOwnWouldBe() throws Exception {
        HttpResponse<String> r = api.get("/api/accounts/99999999/overview", USER);
        assertThat(r.statusCode()).as(r.body()).isEqualTo(404);
        assertThat(r.body()).contains("account 99999999");
    }

    @Test
    void anAnonymousCallerNeverReachesTheSubtasks() throws Exception {
        assertThat(api.get("/api/accounts/1/overview").statusCode()).isEqualTo(401);
    }

    /** The request's span ends as its response goes out, maybe after the client has read it. */
    private static SpanData awaitSpan(String name) {
        return Awaitility.await()
                .atMost(Duration.ofSeconds(10))
                .until(
                        () -> Spans.ended.stream()
                                .filter(s -> s.getName().equals(name))
                                .findFirst()
                                .orElse(null),
                        Objects::nonNull);
    }

    /** Keeps every ended span, as an exporter would see it. */
    @TestConfiguration(proxyBeanMethods = false)
    static class Spans {
        static final List<SpanData> ended = new CopyOnWriteArrayList<>();

        @Bean
        SpanProcessor keepEndedSpans() {
            return new SpanProcessor() {
                @Override
                public void onStart(Context parentContext, ReadWriteSpan span) {}

                @Override
                public boolean isStartRequired() {
                    return false;
                }

                @Override
                public void onEnd(ReadableSpan span) {
                    ended.add(span.toSpanData());
                }

                @Override
                public boolean isEndRequired() {
                    return true;
                }
            };
        }
    }
}
