package io.cosched.spring.boot.autoconfigure.web;

import static org.assertj.core.api.Assertions.assertThat;

import io.cosched.spring.web.CoschedWebStats;
import java.net.http.HttpResponse;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A handler refused work at a limit of the application's own (Spring's {@code @ConcurrencyLimit} with the REJECT
 * policy, a full executor) is a shed request: 503 with {@code Retry-After} and a problem-detail body, where Spring
 * Boot alone answers 500.
 */
@Timeout(60)
class RefusedByTheApplicationWebTest {

    @RegisterExtension
    static final RunningApp app = new RunningApp();

    @Test
    void aCallRefusedBySpringsConcurrencyLimitIsAnswered503WithRetryAfter() throws Exception {
        WebTestApp.Probe.holding = new CountDownLatch(1);
        CompletableFuture<HttpResponse<String>> first = app.http().getAsync("/limited");
        try {
            assertThat(WebTestApp.Probe.holding.await(10, TimeUnit.SECONDS))
                    .as("the first call holds the limit")
                    .isTrue();
            HttpResponse<String> second = app.http().get("/limited");
            assertThat(second.statusCode()).isEqualTo(503);
            assertThat(second.headers().firstValue("Retry-After")).hasValue("1");
            assertThat(second.headers().firstValue("Content-Type")).hasValue("application/problem+json");
            assertThat(second.body())
                    .contains("\"status\":503")
                    .contains("the application refused the request at a limit of its own "
                            + "(InvocationRejectedException); retry later");
        } finally {
            WebTestApp.Probe.release.countDown();
        }
        assertThat(first.get(30, TimeUnit.SECONDS).body()).isEqualTo("held");
        assertThat(app.http().get("/limited").body()).as("the limit free again").isEqualTo("held");
    }

    @Test
    void aFullExecutorsRefusalIsAnswered503WithoutItsMessage() throws Exception {
        long shed = app.bean(CoschedWebStats.class).shed();
        HttpResponse<String> r = app.http().get("/executor-full");
        assertThat(r.statusCode()).isEqualTo(503);
        assertThat(r.headers().firstValue("Retry-After")).hasValue("1");
        assertThat(r.body())
                .contains("(RejectedExecutionException); retry later")
                .doesNotContain("reports");
        assertThat(app.bean(CoschedWebStats.class).shed() - shed)
                .as("cosched's own admission counts only what it shed")
                .isZero();
    }
}
