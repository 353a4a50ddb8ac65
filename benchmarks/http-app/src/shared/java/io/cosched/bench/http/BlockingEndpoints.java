package io.cosched.bench.http;

import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestParam;

import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The HTTP benchmark's endpoints with plain blocking bodies, on {@link Backends}: one set of
 * mappings for every blocking Spring variant. A subclass is the controller of its stack (WebFlux
 * with cosched or Spring's virtual threads, Spring MVC on Tomcat) and says how the bodies run.
 */
public abstract class BlockingEndpoints {

    private final Backends backends;
    private final Object monitor = new Object();
    private final ReentrantLock lock = new ReentrantLock();
    private long lockedCount; // guarded by whichever of the two the request took

    protected BlockingEndpoints(Backends backends) {
        this.backends = backends;
    }

    @GetMapping("/hello")
    public String hello() {
        return "hello";
    }

    @GetMapping("/downstream")
    public String downstream() {
        return backends.callDownstream();
    }

    @GetMapping("/downstream-jdk")
    public String downstreamJdk() throws IOException, InterruptedException {
        return backends.callDownstreamJdk();
    }

    @GetMapping("/jdbc")
    public String jdbc(@RequestParam(defaultValue = "1") int id) {
        return backends.readRow(id);
    }

    @GetMapping("/jdbc-stream")
    public String jdbcStream(@RequestParam(defaultValue = "1") int id) {
        return backends.streamRows(id);
    }

    @GetMapping("/redis")
    public String redis() {
        return backends.readRedis();
    }

    /**
     * Holds one lock of the application's for {@code holdMs} (a call made under it): {@code kind=monitor} a
     * {@code synchronized} block, {@code kind=reentrant} a {@link ReentrantLock}. benchmarks/locks.sh compares what a
     * request costs when the handlers wait on each other through either.
     */
    @GetMapping("/lock")
    public String lock(@RequestParam String kind, @RequestParam(defaultValue = "1") long holdMs)
            throws InterruptedException {
        Duration hold = Duration.ofMillis(holdMs);
        long n;
        switch (kind) {
            case "monitor" -> {
                synchronized (monitor) {
                    Thread.sleep(hold);
                    n = ++lockedCount;
                }
            }
            case "reentrant" -> {
                lock.lock();
                try {
                    Thread.sleep(hold);
                    n = ++lockedCount;
                } finally {
                    lock.unlock();
                }
            }
            default -> throw new IllegalArgumentException("kind: " + kind + " (expected: monitor or reentrant)");
        }
        return Long.toString(n);
    }

    @GetMapping("/thread")
    public String thread() {
        return Thread.currentThread().toString();
    }
}
