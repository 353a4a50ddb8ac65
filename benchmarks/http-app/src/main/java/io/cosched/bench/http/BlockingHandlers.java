package io.cosched.bench.http;

import io.cosched.spring.web.RunAsCoroutine;
import org.springframework.boot.autoconfigure.condition.ConditionalOnExpression;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

import java.io.IOException;

/**
 * Plain blocking bodies. With cosched they run as coroutines on the loop that read the request;
 * in the {@code virtual} variant cosched is off and Spring runs them on JDK virtual threads.
 */
@RestController
@RunAsCoroutine
@ConditionalOnExpression("'${bench.variant}'.equalsIgnoreCase('cosched') or '${bench.variant}'.equalsIgnoreCase('virtual')")
public class BlockingHandlers {

    private final Backends backends;

    public BlockingHandlers(Backends backends) {
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

    @GetMapping("/thread")
    public String thread() {
        return Thread.currentThread().toString();
    }
}
