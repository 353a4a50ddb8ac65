package io.cosched.spring.boot.autoconfigure.web;

import static org.assertj.core.api.Assertions.assertThat;

import io.cosched.IOManager;
import io.cosched.http.client.HttpStub;
import java.net.http.HttpResponse;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A coroutine handler that calls another service with the RestClient from Spring Boot's builder, in
 * an application with nothing but the starter: the call goes out on the handler's own loop and the
 * loop that reads the answer resumes the handler, on both loops.
 */
@Timeout(120)
class LoopClientWebTest {

    @RegisterExtension
    static final RunningApp app = new RunningApp();

    private static HttpStub server;

    @BeforeAll
    static void downstream() throws Exception {
        server = new HttpStub();
        WebTestApp.Probe.downstreamUri = server.uri("/hello").toString();
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    @Test
    void aHandlersDownstreamCallIsResumedByItsOwnLoopOnEveryLoop() throws Exception {
        IOManager io = app.bean(IOManager.class);
        long remote = io.stats().remoteWakeups();
        long local = io.stats().localWakeups();
        Set<String> loops = new HashSet<>();
        for (int i = 0; i < 40; i++) {
            // a new connection each time: the server spreads them over both loops
            HttpResponse<String> r = app.http().firstAnswer("/downstream", 1);
            assertThat(r.statusCode()).isEqualTo(200);
            assertThat(r.body()).startsWith("hello on test-io-");
            loops.add(r.body().substring(r.body().lastIndexOf(' ') + 1));
        }
        assertThat(loops).containsExactlyInAnyOrder("test-io-0", "test-io-1");
        assertThat(io.stats().localWakeups() - local).isGreaterThanOrEqualTo(40);
        assertThat(io.stats().remoteWakeups() - remote).isZero();
    }
}
