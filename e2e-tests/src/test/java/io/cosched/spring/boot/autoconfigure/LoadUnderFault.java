package io.cosched.spring.boot.autoconfigure;

import static io.cosched.TestSupport.eventually;
import static org.assertj.core.api.Assertions.assertThat;

import io.cosched.Coroutine;
import io.cosched.IOManager;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import org.springframework.dao.DataAccessException;

/**
 * The load of the tests that restart or fail over a server: coroutines, alternately on loops 0 and 1, that
 * repeat one call until stopped, counting the calls that failed with Spring's {@link DataAccessException} and,
 * per coroutine, the answers after {@link #struck()}.
 */
public final class LoadUnderFault {

    /** The call each coroutine repeats. */
    public interface Call {
        void run() throws Exception;
    }

    private final AtomicBoolean stop = new AtomicBoolean();
    private final AtomicBoolean struck = new AtomicBoolean();
    private final AtomicInteger failures = new AtomicInteger();
    private final AtomicIntegerArray afterFault;
    private final List<Coroutine<Void>> all = new ArrayList<>();

    /**
     * @param backoff how long a coroutine sleeps after a failed call; {@code null}: it calls again at once
     */
    public LoadUnderFault(IOManager io, int workers, Call call, Duration backoff) {
        afterFault = new AtomicIntegerArray(workers);
        for (int w = 0; w < workers; w++) {
            int me = w;
            all.add(io.spawnOn(w % 2, () -> {
                while (!stop.get()) {
                    boolean after = struck.get();
                    try {
                        call.run();
                        if (after) {
                            afterFault.incrementAndGet(me);
                        }
                    } catch (DataAccessException e) {
                        failures.incrementAndGet();
                        if (backoff != null) {
                            Thread.sleep(backoff);
                        }
                    }
                }
                return null;
            }));
        }
    }

    /** From now on answers count as after the fault. */
    public void struck() {
        struck.set(true);
    }

    public int failures() {
        return failures.get();
    }

    private int workers() {
        return afterFault.length();
    }

    /** Waits until every coroutine has had {@code more} answers more than it has now. */
    public void awaitMoreAnswers(int more, Duration timeout) {
        int[] seen = new int[workers()];
        for (int w = 0; w < seen.length; w++) {
            seen[w] = afterFault.get(w);
        }
        eventually(
                timeout,
                () -> {
                    for (int w = 0; w < seen.length; w++) {
                        if (afterFault.get(w) < seen[w] + more) {
                            return false;
                        }
                    }
                    return true;
                },
                () -> "coroutines stalled: " + this);
    }

    /** Waits until every coroutine has had {@code answers} answers after the fault. */
    public void awaitAnswersAfterFault(int answers, Duration timeout) {
        eventually(
                timeout,
                () -> {
                    for (int w = 0; w < workers(); w++) {
                        if (afterFault.get(w) < answers) {
                            return false;
                        }
                    }
                    return true;
                },
                () -> "coroutines without " + answers + " answers after the fault: " + afterFault + ", failures "
                        + failures + "; stuck:" + stuck(answers));
    }

    /** Stops the coroutines and waits for each to end, rethrowing what one failed with. */
    public void stop() throws Exception {
        stop.set(true);
        for (Coroutine<Void> c : all) {
            c.toFuture().get(30, TimeUnit.SECONDS);
        }
    }

    /** Runs {@code command} (a shell command that restarts a server) and asserts it ended well within 60 s. */
    public static void runCommand(String command) throws Exception {
        Process p = new ProcessBuilder("sh", "-c", command)
                .redirectErrorStream(true)
                .start();
        String out = new String(p.getInputStream().readAllBytes());
        assertThat(p.waitFor(60, TimeUnit.SECONDS))
                .as("%s still running after 60 s", command)
                .isTrue();
        assertThat(p.exitValue()).as("%s: %s", command, out).isZero();
    }

    /** The coroutines with fewer than {@code answers} answers after the fault, with where they are. */
    private String stuck(int answers) {
        StringBuilder sb = new StringBuilder();
        for (int w = 0; w < all.size(); w++) {
            if (afterFault.get(w) < answers) {
                sb.append("\n").append(all.get(w));
                for (StackTraceElement e : all.get(w).thread().getStackTrace()) {
                    sb.append("\n    at ").append(e);
                }
            }
        }
        return sb.toString();
    }

    @Override
    public String toString() {
        return "answers after the fault " + afterFault + ", failures " + failures;
    }
}
