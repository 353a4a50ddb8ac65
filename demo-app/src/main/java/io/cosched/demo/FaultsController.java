package io.cosched.demo;

import io.cosched.Coroutines;
import io.cosched.spring.web.RunAsCoroutine;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/**
 * Misbehaving handlers, to see what the stall watchdog does about them (docs/operations.md, "What
 * a stuck loop costs"; benchmarks/soak.sh drives them): a handler that spins on its loop's CPU, and
 * one that sleeps and tells how late it woke, and where.
 */
@RestController
@RequestMapping("/api/faults")
public class FaultsController {

    /**
     * Spins on the CPU for {@code ms} without ever parking: a stall when longer than
     * {@code cosched.stall.threshold}. With {@code loop} (a loop thread's name, such as
     * {@code cosched-io-0}), spins only when the request landed on that loop, else answers at once.
     */
    @RunAsCoroutine
    @GetMapping("/spin")
    public Spin spin(@RequestParam(defaultValue = "300") int ms, @RequestParam(required = false) String loop) {
        Checks.between("ms", ms, 0, 30_000);
        String on = carrier();
        if (loop != null && !loop.equals(on)) {
            return new Spin(on, 0);
        }
        long start = System.nanoTime();
        long until = start + TimeUnit.MILLISECONDS.toNanos(ms);
        while (System.nanoTime() - until < 0) {
            Thread.onSpinWait();
        }
        return new Spin(on, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start));
    }

    /**
     * Sleeps {@code ms} with {@code Coroutines.sleep} (a timer of the handler's loop) and answers how
     * late it woke and on which loop: should that loop get stuck meanwhile, the timer fires elsewhere.
     */
    @RunAsCoroutine
    @GetMapping("/nap")
    public Nap nap(@RequestParam(defaultValue = "100") int ms) throws InterruptedException {
        Checks.between("ms", ms, 0, 60_000);
        String before = carrier();
        long due = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(ms);
        Coroutines.sleep(Duration.ofMillis(ms));
        return new Nap(before, carrier(), TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - due));
    }

    private static String carrier() {
        String t = Thread.currentThread().toString(); // VirtualThread[#42]/runnable@cosched-io-0
        return t.substring(t.lastIndexOf('@') + 1);
    }

    /** Where it spun, and for how long. */
    public record Spin(String loop, long spunMs) {}

    /** Where it fell asleep, where it woke, and how late. */
    public record Nap(String slept, String woke, long lateMs) {}
}
