package io.cosched.spring.web.netty;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsServer;
import io.cosched.IOManager;
import io.cosched.TestSupport;
import io.cosched.net.TestTls;
import io.netty.handler.ssl.ClientAuth;
import io.netty.handler.ssl.JdkSslContext;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import reactor.core.publisher.Mono;
import reactor.netty.http.client.HttpClient;

/** Reactor Netty's client on cosched's loops with a pool per loop, without Spring, against a JDK HTTP server. */
@Timeout(60)
class LoopConnectionProviderTest {

    private IOManager io;
    private HttpServer stub;
    private String hello;
    private LoopConnectionProvider pools;
    private HttpClient client;

    @BeforeEach
    void start() throws Exception {
        io = IOManager.builder()
                .name("wc-io")
                .threads(2)
                .stallThreshold(Duration.ZERO)
                .build();
        io.start();
        stub = serve(HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 50));
        hello = "http://127.0.0.1:" + stub.getAddress().getPort() + "/hello";
        pools = LoopConnectionProvider.create(io, "test", 50);
        client = HttpClient.create(pools).runOn(new IOManagerLoopResources(io));
    }

    /** {@code /hello} answers at once, {@code /slow} after three seconds. */
    private static <S extends HttpServer> S serve(S server) {
        server.setExecutor(Executors.newFixedThreadPool(
                4, r -> Thread.ofPlatform().daemon().unstarted(r)));
        server.createContext("/hello", ex -> {
            byte[] body = "hello".getBytes(StandardCharsets.UTF_8);
            ex.sendResponseHeaders(200, body.length);
            ex.getResponseBody().write(body);
            ex.close();
        });
        server.createContext("/slow", ex -> {
            try {
                Thread.sleep(3000);
                ex.sendResponseHeaders(200, -1);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } finally {
                ex.close();
            }
        });
        server.start();
        return server;
    }

    @AfterEach
    void stop() {
        pools.disposeLater().block(Duration.ofSeconds(10));
        stub.stop(0);
        io.stop(Duration.ofSeconds(10));
    }

    private Mono<String> call() {
        return client.get().uri(hello).responseContent().aggregate().asString();
    }

    /** The thread that delivers the answer: the loop of the connection that read it. */
    private String replyThread() {
        return call().map(s -> Thread.currentThread().getName()).block();
    }

    private String loopThread(int index) throws Exception {
        return io.eventLoop(index)
                .submit(() -> Thread.currentThread().getName())
                .get(10, TimeUnit.SECONDS);
    }

    @Test
    void aCoroutineBlockingOnACallIsAnsweredOverItsOwnLoopsConnectionAndResumedByThatLoop() throws Exception {
        for (int loopIndex = 0; loopIndex < 2; loopIndex++) {
            int home = loopIndex;
            assertThat(io.spawnOn(home, this::replyThread).join()).isEqualTo(loopThread(home));
            assertThat(pools.pool(home).name()).isEqualTo("test-loop" + home);
            long remote = io.carrierStats().get(home).remoteWakeups();
            long local = io.carrierStats().get(home).localWakeups();
            String last = io.spawnOn(home, () -> {
                        String body = null;
                        for (int i = 0; i < 30; i++) {
                            body = call().block();
                        }
                        return body;
                    })
                    .join();
            assertThat(last).isEqualTo("hello");
            if (TestSupport.carrierMode()) {
                assertThat(io.carrierStats().get(home).localWakeups() - local)
                        .as("loop %d", home)
                        .isGreaterThanOrEqualTo(30);
                assertThat(io.carrierStats().get(home).remoteWakeups() - remote)
                        .as("loop %d", home)
                        .isZero();
            }
        }
    }

    @Test
    void aReactiveCallerOnALoopThreadKeepsItsConnectionsOnThatLoop() throws Exception {
        for (int loopIndex = 0; loopIndex < 2; loopIndex++) {
            var thread = io.eventLoop(loopIndex)
                    .submit(() ->
                            call().map(s -> Thread.currentThread().getName()).toFuture())
                    .get(10, TimeUnit.SECONDS);
            assertThat(thread.get(10, TimeUnit.SECONDS)).isEqualTo(loopThread(loopIndex));
        }
    }

    @Test
    void anyOtherThreadUsesThePoolOfNoLoop() throws Exception {
        assertThat(pools.poolOfCaller().name()).isEqualTo("test");
        assertThat(call().block(Duration.ofSeconds(10))).isEqualTo("hello");
        assertThat(io.spawnOn(1, () -> pools.poolOfCaller().name()).join()).isEqualTo("test-loop1");
        assertThat(io.eventLoop(0).submit(() -> pools.poolOfCaller().name()).get(10, TimeUnit.SECONDS))
                .isEqualTo("test-loop0");
        assertThat(pools.maxConnections()).isEqualTo(3 * 50);
    }

    private void assertLocalOnly(int home, long remoteBefore, long localBefore, int atLeast) {
        if (TestSupport.carrierMode()) {
            assertThat(io.carrierStats().get(home).localWakeups() - localBefore)
                    .as("loop %d", home)
                    .isGreaterThanOrEqualTo(atLeast);
            assertThat(io.carrierStats().get(home).remoteWakeups() - remoteBefore)
                    .as("loop %d", home)
                    .isZero();
        }
    }

    @Test
    void aResponseTimeoutFailsTheCallAndTheLoopsPoolGoesOn() throws Exception {
        HttpClient impatient = client.responseTimeout(Duration.ofMillis(300));
        String slow = hello.replace("/hello", "/slow");
        String outcome = io.spawnOn(1, () -> {
                    long started = System.nanoTime();
                    try {
                        impatient
                                .get()
                                .uri(slow)
                                .responseContent()
                                .aggregate()
                                .asString()
                                .block();
                        return "answered";
                    } catch (RuntimeException e) {
                        long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
                        return e.getClass().getSimpleName() + " within 2 s " + (ms < 2000);
                    }
                })
                .join();
        assertThat(outcome).isEqualTo("ReadTimeoutException within 2 s true");
        io.spawnOn(1, () -> call().block()).join();
        long remote = io.carrierStats().get(1).remoteWakeups();
        long local = io.carrierStats().get(1).localWakeups();
        assertThat(io.spawnOn(1, () -> {
                            for (int i = 0; i < 10; i++) {
                                call().block();
                            }
                            return call().block();
                        })
                        .join())
                .isEqualTo("hello");
        assertLocalOnly(1, remote, local, 11);
    }

    @Test
    void aServerRestartClosesThePooledConnectionsAndTheNextCallsOpenNewOnesOnTheLoop() throws Exception {
        assertThat(io.spawnOn(0, () -> call().block()).join()).isEqualTo("hello");
        InetSocketAddress address = stub.getAddress();
        stub.stop(0);
        stub = serve(HttpServer.create(address, 50));
        int failures = io.spawnOn(0, () -> {
                    int failed = 0;
                    for (int i = 0; i < 5; i++) {
                        try {
                            call().block();
                        } catch (RuntimeException e) {
                            failed++; // a pooled connection the old server closed, found closed as the request went out
                        }
                    }
                    return failed;
                })
                .join();
        assertThat(failures).isLessThanOrEqualTo(1);
        long remote = io.carrierStats().get(0).remoteWakeups();
        long local = io.carrierStats().get(0).localWakeups();
        assertThat(io.spawnOn(0, () -> {
                            for (int i = 0; i < 10; i++) {
                                call().block();
                            }
                            return replyThread();
                        })
                        .join())
                .isEqualTo(loopThread(0));
        assertLocalOnly(0, remote, local, 11);
    }

    @Test
    void tlsConnectionsLiveOnTheLoopsToo() throws Exception {
        TestTls tls = TestTls.create();
        HttpsServer https = HttpsServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 50);
        https.setHttpsConfigurator(new HttpsConfigurator(tls.server));
        serve(https);
        try {
            HttpClient secure =
                    client.secure(spec -> spec.sslContext(new JdkSslContext(tls.client, true, ClientAuth.NONE)));
            String uri = "https://127.0.0.1:" + https.getAddress().getPort() + "/hello";
            io.spawnOn(
                            1,
                            () -> secure.get()
                                    .uri(uri)
                                    .responseContent()
                                    .aggregate()
                                    .asString()
                                    .block())
                    .join();
            long remote = io.carrierStats().get(1).remoteWakeups();
            long local = io.carrierStats().get(1).localWakeups();
            assertThat(io.spawnOn(1, () -> {
                                String thread = null;
                                for (int i = 0; i < 10; i++) {
                                    thread = secure.get()
                                            .uri(uri)
                                            .responseContent()
                                            .aggregate()
                                            .asString()
                                            .map(x -> Thread.currentThread().getName())
                                            .block();
                                }
                                return thread;
                            })
                            .join())
                    .isEqualTo(loopThread(1));
            assertLocalOnly(1, remote, local, 10);
        } finally {
            https.stop(0);
        }
    }

    @Test
    void disposingItDisposesEveryPoolAndLeavesTheLoopsRunning() throws Exception {
        assertThat(call().block(Duration.ofSeconds(10))).isEqualTo("hello");
        pools.disposeLater().block(Duration.ofSeconds(10));
        assertThat(pools.isDisposed()).isTrue();
        assertThat(pools.pool(0).isDisposed()).isTrue();
        assertThat(io.spawnOn(0, () -> "still running").join()).isEqualTo("still running");
    }
}
