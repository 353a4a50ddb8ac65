package io.cosched.bench.http;

import io.cosched.TaskScope;
import io.cosched.spring.web.RunAsCoroutine;
import org.springframework.boot.autoconfigure.condition.ConditionalOnExpression;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * The fan-out scenario on cosched: three calls to the stub at once, each a subtask of one {@link TaskScope} with
 * the default policy (all must succeed). The subtasks are coroutines on the request's own loop, so their calls,
 * like the handler's, need no other thread.
 */
@RestController
@RunAsCoroutine
@ConditionalOnExpression("'${bench.variant}'.equalsIgnoreCase('cosched')")
public class CoroutineFanout {

    private final Backends backends;

    public CoroutineFanout(Backends backends) {
        this.backends = backends;
    }

    /** The three bodies as a JSON array, the same in every variant. */
    @GetMapping("/fanout")
    public String fanout() throws InterruptedException {
        try (TaskScope<String, Void> scope = TaskScope.open()) {
            TaskScope.Subtask<String> a = scope.fork(backends::callDownstream);
            TaskScope.Subtask<String> b = scope.fork(backends::callDownstream);
            TaskScope.Subtask<String> c = scope.fork(backends::callDownstream);
            scope.join();
            return "[" + a.get() + "," + b.get() + "," + c.get() + "]";
        }
    }
}
