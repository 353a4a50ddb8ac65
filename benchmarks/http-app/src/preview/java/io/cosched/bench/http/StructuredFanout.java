package io.cosched.bench.http;

import org.springframework.boot.autoconfigure.condition.ConditionalOnExpression;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

import java.util.concurrent.StructuredTaskScope;
import java.util.concurrent.StructuredTaskScope.Subtask;

/**
 * The fan-out scenario on Spring's virtual threads with the JDK's own structured scope, a preview API in JDK 25:
 * each subtask a new virtual thread, joined by the request's. Compiled apart from the other sources, only on
 * JDK 25 and with {@code --enable-preview} (the jdk25-preview profile of this module's pom), and run only with
 * {@code --enable-preview} ({@code benchmarks/http-common.sh}'s virtual-threads-sts variant); it replaces
 * {@link VirtualFanout} when {@code bench.fanout=structured}.
 */
@RestController
@ConditionalOnExpression("'${bench.variant}'.equalsIgnoreCase('virtual') and '${bench.fanout:futures}' == 'structured'")
public class StructuredFanout {

    private final Backends backends;

    public StructuredFanout(Backends backends) {
        this.backends = backends;
    }

    /** The three bodies as a JSON array, the same in every variant. */
    @GetMapping("/fanout")
    public String fanout() throws InterruptedException {
        try (var scope = StructuredTaskScope.open()) { // all must succeed, as TaskScope.open()
            Subtask<String> a = scope.fork(backends::callDownstream);
            Subtask<String> b = scope.fork(backends::callDownstream);
            Subtask<String> c = scope.fork(backends::callDownstream);
            scope.join();
            return "[" + a.get() + "," + b.get() + "," + c.get() + "]";
        }
    }
}
