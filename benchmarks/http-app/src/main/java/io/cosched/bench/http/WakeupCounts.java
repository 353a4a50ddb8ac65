package io.cosched.bench.http;

import io.cosched.CarrierStats;
import io.cosched.IOManager;
import org.springframework.boot.autoconfigure.condition.ConditionalOnExpression;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Mono;

/**
 * The loops' resumes so far, summed over the loops: {@code "<local> <remote> <monitor>"} (monitor: coroutines
 * handed back by the JDK after waiting to enter a {@code synchronized} block). benchmarks/run.sh reads them
 * before and after each measured window of a cosched variant, for the remote wake-ups per request (a resume
 * asked for by another thread: a JDK poller, Lettuce's or Reactor Netty's threads, a pool). A {@code Mono}
 * handler: reading it runs no coroutine and moves no count.
 */
@RestController
@ConditionalOnExpression("'${bench.variant}'.equalsIgnoreCase('cosched')")
public class WakeupCounts {

    private final IOManager io;

    public WakeupCounts(IOManager io) {
        this.io = io;
    }

    @GetMapping("/wakeups")
    public Mono<String> wakeups() {
        long local = 0;
        long remote = 0;
        long monitor = 0;
        for (CarrierStats c : io.carrierStats()) {
            local += c.localWakeups();
            remote += c.remoteWakeups();
            monitor += c.monitorWakeups();
        }
        return Mono.just(local + " " + remote + " " + monitor);
    }
}
