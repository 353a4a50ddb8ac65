package io.cosched.example;

import io.cosched.Channel;
import io.cosched.Coroutine;
import io.cosched.Coroutines;
import io.cosched.IOManager;
import io.cosched.Timer;
import io.cosched.WaitGroup;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * cosched's runtime in one page: coroutines on epoll event loops, parking sleeps, a channel, a
 * wait group, timers and the stats. Run it with {@code ./mvnw -q -pl core test-compile exec:exec}.
 */
public final class HelloCoroutines {

    public static void main(String[] args) throws Exception {
        try (IOManager io = IOManager.builder().name("cosched-io").threads(2).build()) {
            io.start();
            System.out.println(
                    "transport=" + io.transport() + " mode=" + io.stats().mode());

            // A coroutine is a virtual thread whose carrier is an event loop thread.
            Coroutine<String> hello = io.spawn(() -> "hello from " + Thread.currentThread());
            System.out.println(hello.join());

            // 10,000 coroutines sleep 100 ms each on two loops: they park, the loops stay free.
            int n = 10_000;
            WaitGroup wg = new WaitGroup(n);
            long start = System.nanoTime();
            for (int i = 0; i < n; i++) {
                io.execute(() -> {
                    try {
                        Coroutines.sleep(Duration.ofMillis(100));
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    } finally {
                        wg.done();
                    }
                });
            }
            System.out.println("while they sleep: " + io.stats());
            wg.await();
            System.out.printf(
                    "%,d sleeping coroutines finished in %d ms%n", n, (System.nanoTime() - start) / 1_000_000);

            // A rendezvous channel between a producer and a consumer coroutine.
            Channel<Integer> numbers = new Channel<>(0);
            io.spawn(() -> {
                for (int i = 1; i <= 5; i++) {
                    numbers.send(i);
                }
                numbers.close();
                return null;
            });
            Coroutine<Integer> sum = io.spawn(() -> {
                int total = 0;
                for (int x : numbers) {
                    total += x;
                }
                return total;
            });
            System.out.println("sum over the channel = " + sum.join());

            // A recurring timer on the loops, cancelled after three ticks.
            AtomicInteger ticks = new AtomicInteger();
            WaitGroup three = new WaitGroup(3);
            Timer timer = io.timers().addRecurringTimer(Duration.ofMillis(20), () -> {
                if (ticks.incrementAndGet() <= 3) {
                    three.done();
                }
            });
            three.await();
            timer.cancel();
            System.out.println("timer ticked " + ticks.get() + " times, then was cancelled");
            System.out.println("quiet again: " + io.stats());
        }
    }
}
