package io.cosched.bench.http;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnExpression;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * The fan-out scenario on Spring's virtual threads, as code without a structured scope writes it: three
 * {@code CompletableFuture}s on a virtual-thread-per-task executor, joined by the request's virtual thread: in the
 * WebFlux application's {@code virtual} variant and in the Spring MVC one (which has no {@code bench.variant}).
 * {@code bench.fanout=structured} puts the JDK's preview {@code StructuredTaskScope} in its place (StructuredFanout).
 */
@RestController
@ConditionalOnExpression(
        "'${bench.variant:virtual}'.equalsIgnoreCase('virtual') and '${bench.fanout:futures}' == 'futures'")
public class VirtualFanout implements DisposableBean {

    private final Backends backends;
    // One shared by all requests, and not a bean: a bean of type Executor makes Spring Boot back off its
    // applicationTaskExecutor, the very executor that runs the blocking handlers on virtual threads, and
    // they would then run on the event loop.
    private final ExecutorService executor = Executors.newVirtualThreadPerTaskExecutor();

    public VirtualFanout(Backends backends) {
        this.backends = backends;
    }

    /** The three bodies as a JSON array, the same in every variant. */
    @GetMapping("/fanout")
    public String fanout() {
        CompletableFuture<String> a = CompletableFuture.supplyAsync(backends::callDownstream, executor);
        CompletableFuture<String> b = CompletableFuture.supplyAsync(backends::callDownstream, executor);
        CompletableFuture<String> c = CompletableFuture.supplyAsync(backends::callDownstream, executor);
        CompletableFuture.allOf(a, b, c).join();
        return "[" + a.join() + "," + b.join() + "," + c.join() + "]";
    }

    @Override
    public void destroy() {
        executor.close();
    }
}
