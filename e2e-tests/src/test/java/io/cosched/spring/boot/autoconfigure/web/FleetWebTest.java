package io.cosched.spring.boot.autoconfigure.web;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.StandardProtocolFamily;
import java.net.URI;
import java.net.UnixDomainSocketAddress;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * A rolling restart behind a real load balancer: three instances of the test application behind HAProxy with
 * docs/haproxy/haproxy.cfg as it is (Debian's package; .ci/haproxy.sh installs it), GETs and POSTs through it at
 * a fixed rate, each instance closed (SIGTERM's path: the context closes) and started again on its port in
 * turn. Nothing is lost, and HAProxy took each instance out because its readiness answered 503, not because its
 * port refused connections: cosched.shutdown.delay held the listener open until the balancer had seen it leave.
 * Skips with the reason where there is no HAProxy; the delay itself is tested without one
 * (WebModesAndLifecycleTest).
 */
@Timeout(180)
class FleetWebTest {

    private static final Path CONFIG = Path.of("..", "docs", "haproxy", "haproxy.cfg");

    private static Path haproxy() {
        List<String> candidates = new ArrayList<>();
        String env = System.getenv("COSCHED_TEST_HAPROXY");
        if (env != null && !env.isBlank()) {
            candidates.add(env);
        }
        candidates.add("/usr/sbin/haproxy");
        candidates.add("/usr/local/sbin/haproxy");
        for (String c : candidates) {
            if (Files.isExecutable(Path.of(c))) {
                return Path.of(c);
            }
        }
        return null;
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    private static ConfigurableApplicationContext instance(int port) {
        return WebTestApp.start(
                "server.port=" + port,
                "server.shutdown=graceful",
                "cosched.shutdown.delay=3s",
                "cosched.web.request-timeout=10s",
                "cosched.web.request-timeout-status=504",
                "management.endpoint.health.probes.enabled=true",
                "management.endpoints.web.exposure.include=health");
    }

    /** HAProxy's state of each server of the backend ("UP", "DOWN", ...), from its stats socket. */
    private static Map<String, String> states(Path socket) throws IOException {
        Map<String, String> states = new TreeMap<>();
        try (SocketChannel ch = SocketChannel.open(StandardProtocolFamily.UNIX)) {
            ch.connect(UnixDomainSocketAddress.of(socket));
            ch.write(ByteBuffer.wrap("show stat\n".getBytes(StandardCharsets.US_ASCII)));
            StringBuilder csv = new StringBuilder();
            ByteBuffer buf = ByteBuffer.allocate(16384);
            while (ch.read(buf) >= 0) {
                buf.flip();
                csv.append(StandardCharsets.US_ASCII.decode(buf));
                buf.clear();
            }
            for (String line : csv.toString().split("\n")) {
                String[] f = line.split(",", -1);
                if (f.length > 17 && f[0].equals("service") && f[1].startsWith("app")) {
                    states.put(f[1], f[17]);
                }
            }
        }
        return states;
    }

    @Test
    void aRollingRestartBehindHAProxyLosesNothingAndEachInstanceLeavesByReadiness() throws Exception {
        Path haproxy = haproxy();
        Assumptions.assumeTrue(
                haproxy != null,
                "no HAProxy (COSCHED_TEST_HAPROXY unset, nothing at /usr/sbin/haproxy): .ci/haproxy.sh installs"
                        + " Debian's package; without it this test cannot run");
        Path dir = Files.createTempDirectory(Path.of("target"), "fleet");
        int front = freePort();
        int[] ports = new int[3];
        ConfigurableApplicationContext[] apps = new ConfigurableApplicationContext[3];
        for (int i = 0; i < 3; i++) {
            apps[i] = instance(0);
            ports[i] = WebTestApp.port(apps[i]);
        }
        Path log = dir.resolve("haproxy.log");
        ProcessBuilder pb = new ProcessBuilder(haproxy.toString(), "-db", "-f", CONFIG.toString())
                .redirectErrorStream(true)
                .redirectOutput(log.toFile());
        pb.environment().put("FLEET_DIR", dir.toAbsolutePath().toString());
        pb.environment().put("FLEET_PORT", Integer.toString(front));
        for (int i = 0; i < 3; i++) {
            pb.environment().put("FLEET_PORT" + (i + 1), Integer.toString(ports[i]));
        }
        Process balancer = pb.start();
        Path socket = dir.resolve("haproxy.sock");
        AtomicBoolean loading = new AtomicBoolean(true);
        ConcurrentLinkedQueue<String> outcomes = new ConcurrentLinkedQueue<>();
        java.util.concurrent.atomic.AtomicLong sent = new java.util.concurrent.atomic.AtomicLong();
        Thread load = null;
        try {
            Await.until(
                    () -> Files.exists(socket)
                            && states(socket).values().stream()
                                            .filter("UP"::equals)
                                            .count()
                                    == 3,
                    () -> "HAProxy never had the three instances UP: " + safeStates(socket) + "; " + tail(log));

            // 50 requests a second through the balancer, GETs and POSTs alternating, each a coroutine that
            // parks 20 ms; nothing retried by the client
            HttpClient client = HttpClient.newBuilder()
                    .version(HttpClient.Version.HTTP_1_1)
                    .connectTimeout(Duration.ofSeconds(2))
                    .build();
            URI base = URI.create("http://127.0.0.1:" + front);
            load = Thread.ofPlatform().name("fleet-load").start(() -> {
                long next = System.nanoTime();
                for (long n = 0; loading.get(); n++) {
                    HttpRequest r = n % 2 == 0
                            ? HttpRequest.newBuilder(base.resolve("/sleep?ms=20"))
                                    .timeout(Duration.ofSeconds(20))
                                    .build()
                            : HttpRequest.newBuilder(base.resolve("/echo-slow?ms=20"))
                                    .timeout(Duration.ofSeconds(20))
                                    .POST(HttpRequest.BodyPublishers.ofString("deposit-" + n))
                                    .build();
                    sent.incrementAndGet();
                    client.sendAsync(r, HttpResponse.BodyHandlers.discarding())
                            .whenComplete((resp, e) -> outcomes.add(
                                    e != null
                                            ? r.method() + " " + e.getClass().getSimpleName()
                                            : r.method() + " " + resp.statusCode()));
                    next += TimeUnit.MILLISECONDS.toNanos(20);
                    LockSupport.parkNanos(next - System.nanoTime());
                }
            });

            for (int i = 0; i < 3; i++) {
                String name = "app" + (i + 1);
                apps[i].close();
                apps[i] = instance(ports[i]);
                Await.until(
                        () -> "UP".equals(states(socket).get(name)),
                        () -> name + " not back in rotation: " + safeStates(socket) + "; " + tail(log));
            }
            loading.set(false);
            load.join(TimeUnit.SECONDS.toMillis(10));
            Await.until(
                    () -> outcomes.size() == sent.get(),
                    () -> outcomes.size() + " of " + sent.get() + " requests answered");
        } finally {
            loading.set(false);
            if (load != null) {
                load.join(TimeUnit.SECONDS.toMillis(10));
            }
            for (ConfigurableApplicationContext app : apps) {
                if (app != null && app.isActive()) {
                    app.close();
                }
            }
            balancer.destroy();
            balancer.waitFor(10, TimeUnit.SECONDS);
        }

        Map<String, Integer> by = new TreeMap<>();
        outcomes.forEach(o -> by.merge(o, 1, Integer::sum));
        List<String> downs = Files.readAllLines(log).stream()
                .filter(l -> l.startsWith("Server service/app") && l.contains(" is DOWN"))
                .toList();
        for (int i = 1; i <= 3; i++) {
            String app = "Server service/app" + i + " is DOWN, reason: ";
            assertThat(downs)
                    .as("why HAProxy took app" + i + " out: its readiness, not a refused connection")
                    .anyMatch(l -> l.startsWith(app + "Layer7 wrong status, code: 503"))
                    .noneMatch(l -> l.startsWith(app + "Layer4"));
        }
        assertThat(by.keySet()).as("outcomes of the requests: " + by).containsOnly("GET 200", "POST 200");
        assertThat(outcomes.size()).as("requests made during the restarts").isGreaterThan(300);
    }

    private static String safeStates(Path socket) {
        try {
            return Files.exists(socket) ? states(socket).toString() : "(no stats socket yet)";
        } catch (IOException e) {
            return e.toString();
        }
    }

    private static String tail(Path log) {
        try {
            List<String> lines = Files.readAllLines(log).stream()
                    .filter(l -> !l.contains("HTTP/1.1\""))
                    .toList();
            return String.join("\n", lines.subList(Math.max(0, lines.size() - 20), lines.size()));
        } catch (IOException e) {
            return e.toString();
        }
    }
}
