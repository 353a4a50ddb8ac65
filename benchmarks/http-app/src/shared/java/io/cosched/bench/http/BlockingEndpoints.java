package io.cosched.bench.http;

import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestParam;

import java.io.IOException;

/**
 * The HTTP benchmark's endpoints with plain blocking bodies, on {@link Backends}: one set of
 * mappings for every blocking Spring variant. A subclass is the controller of its stack (WebFlux
 * with cosched or Spring's virtual threads, Spring MVC on Tomcat) and says how the bodies run.
 */
public abstract class BlockingEndpoints {

    private final Backends backends;

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

    @GetMapping("/thread")
    public String thread() {
        return Thread.currentThread().toString();
    }
}
