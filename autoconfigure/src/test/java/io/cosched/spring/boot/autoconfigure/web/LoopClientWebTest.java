package io.cosched.spring.boot.autoconfigure.web;

import com.sun.net.httpserver.HttpServer;
import io.cosched.IOManager;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.Executors;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A coroutine handler that calls another service with the RestClient from Spring Boot's builder, in
 * an application with nothing but the starter: the call goes out on the handler's own loop and the
 * loop that reads the answer resumes the handler, on both loops.
 */
@Timeout(120)
class LoopClientWebTest {

    @RegisterExtension
    static final RunningApp app = new RunningApp();

    private static HttpServer server;

    @BeforeAll
    static void downstream() throws Exception {
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 100);
        server.setExecutor(Executors.newFixedThreadPool(4, r -> Thread.ofPlatform().daemon().unstarted(r)));
        server.createContext("/price", ex -> {
            byte[] body = "42".getBytes(StandardCharsets.UTF_8);
            ex.sendResponseHeaders(200, body.length);
            ex.getResponseBody().write(body);
            ex.close();
        });
        server.start();
        WebTestApp.Probe.downstreamUri = "http://127.0.0.1:" + server.getAddress().getPort() + "/price";
    }

    @AfterAll
    static void stop() {
        server.stop(0);
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
            assertThat(r.body()).startsWith("42 on test-io-");
            loops.add(r.body().substring(r.body().lastIndexOf(' ') + 1));
        }
        assertThat(loops).containsExactlyInAnyOrder("test-io-0", "test-io-1");
        assertThat(io.stats().localWakeups() - local).isGreaterThanOrEqualTo(40);
        assertThat(io.stats().remoteWakeups() - remote).isZero();
    }
}
