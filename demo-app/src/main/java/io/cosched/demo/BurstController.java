package io.cosched.demo;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.springframework.core.env.Environment;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/**
 * Fires a load burst at this app, for the dashboard: {@code requests} HTTP calls to {@code path},
 * {@code concurrency} at a time, from ordinary JDK virtual threads acting as outside clients. The
 * burst runs in the background; {@code GET /api/burst} tells how it goes.
 */
@RestController
@RequestMapping("/api/burst")
public class BurstController {

    private final Environment environment;
    private final HttpClient client =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private final AtomicReference<Burst> current = new AtomicReference<>();

    public BurstController(Environment environment) {
        this.environment = environment;
    }

    @PostMapping
    public ResponseEntity<Burst> start(
            @RequestParam(defaultValue = "2000") int requests,
            @RequestParam(defaultValue = "200") int concurrency,
            @RequestParam(defaultValue = "/api/quote/demo-sku") String path) {
        Checks.between("requests", requests, 1, 100_000);
        Checks.between("concurrency", concurrency, 1, 1_000);
        if (!path.startsWith("/api/") || path.startsWith("/api/burst")) {
            throw new IllegalArgumentException("path: '" + path + "' (expected: an /api/ path other than /api/burst)");
        }
        Burst burst = new Burst(requests, concurrency, path);
        Burst running = current.get();
        if (running != null && running.isRunning()) {
            return ResponseEntity.status(HttpStatus.CONFLICT).body(running);
        }
        current.set(burst);
        URI target = URI.create("http://127.0.0.1:" + environment.getRequiredProperty("local.server.port") + path);
        Thread.ofVirtual().name("demo-burst").start(() -> burst.run(client, target));
        return ResponseEntity.accepted().body(burst);
    }

    @GetMapping
    public ResponseEntity<Burst> status() {
        Burst b = current.get();
        return b == null ? ResponseEntity.noContent().build() : ResponseEntity.ok(b);
    }

    /** One burst and its progress; serialised as JSON by its getters. */
    public static final class Burst {
        private final int requests;
        private final int concurrency;
        private final String path;
        private final AtomicInteger done = new AtomicInteger();
        private final AtomicInteger ok = new AtomicInteger();
        private final AtomicInteger failed = new AtomicInteger();
        private volatile boolean running = true;

        Burst(int requests, int concurrency, String path) {
            this.requests = requests;
            this.concurrency = concurrency;
            this.path = path;
        }

        void run(HttpClient client, URI target) {
            Semaphore slots = new Semaphore(concurrency);
            try {
                for (int i = 0; i < requests; i++) {
                    slots.acquire();
                    Thread.ofVirtual().start(() -> {
                        try {
                            HttpResponse<Void> r = client.send(
                                    HttpRequest.newBuilder(target)
                                            .timeout(Duration.ofSeconds(30))
                                            .build(),
                                    HttpResponse.BodyHandlers.discarding());
                            (r.statusCode() < 400 ? ok : failed).incrementAndGet();
                        } catch (Exception e) {
                            failed.incrementAndGet();
                        } finally {
                            done.incrementAndGet();
                            slots.release();
                        }
                    });
                }
                slots.acquire(concurrency); // the last ones finished
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } finally {
                running = false;
            }
        }

        public int getRequests() {
            return requests;
        }

        public int getConcurrency() {
            return concurrency;
        }

        public String getPath() {
            return path;
        }

        public int getDone() {
            return done.get();
        }

        public int getOk() {
            return ok.get();
        }

        public int getFailed() {
            return failed.get();
        }

        public boolean isRunning() {
            return running;
        }
    }
}
