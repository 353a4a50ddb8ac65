package io.cosched.bench.http;

import io.cosched.spring.web.RunAsCoroutine;
import org.springframework.boot.autoconfigure.condition.ConditionalOnExpression;
import org.springframework.web.bind.annotation.RestController;

/**
 * The blocking endpoints on WebFlux. With cosched they run as coroutines on the loop that read the
 * request; in the {@code virtual} variant cosched is off and Spring runs them on JDK virtual threads.
 */
@RestController
@RunAsCoroutine
@ConditionalOnExpression("'${bench.variant}'.equalsIgnoreCase('cosched') or '${bench.variant}'.equalsIgnoreCase('virtual')")
public class BlockingHandlers extends BlockingEndpoints {

    public BlockingHandlers(Backends backends) {
        super(backends);
    }
}
