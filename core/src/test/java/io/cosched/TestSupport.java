package io.cosched;

import static org.junit.jupiter.api.Assertions.fail;

import io.cosched.internal.CoroutineThreads;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/** Helpers shared by the tests. */
public final class TestSupport {

    private TestSupport() {}

    /** Whether this JVM runs in carrier mode. */
    public static boolean carrierMode() {
        return CoroutineThreads.get().isCarrierMode();
    }

    /**
     * Waits for a state to be reached, failing after {@code timeout}. For conditions that are states
     * (a carrier is parked, a counter reached a value), not for outcomes a latch or join can await.
     */
    public static void eventually(Duration timeout, BooleanSupplier condition, Supplier<String> describe) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                fail("not reached within " + timeout + ": " + describe.get());
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
        }
    }

    /** The name of the carrier a virtual thread runs on, from its toString ({@code VirtualThread[#n]/runnable@carrier}). */
    public static String carrierName() {
        String s = Thread.currentThread().toString();
        int at = s.lastIndexOf('@');
        return at < 0 ? "" : s.substring(at + 1);
    }

    /** Result of a forked JVM. */
    public record Forked(int exitCode, String output) {}

    /** Runs {@code main} in a new JVM with this test classpath and the given JVM arguments. */
    public static Forked fork(Class<?> main, List<String> jvmArgs, Duration timeout, String... args)
            throws IOException, InterruptedException {
        String classPath = System.getProperty("java.class.path")
                + File.pathSeparator
                + System.getProperty("surefire.test.class.path", "");
        return fork(main, jvmArgs, classPath, timeout, args);
    }

    /** Runs {@code main} in a new JVM with the given class path and JVM arguments. */
    public static Forked fork(Class<?> main, List<String> jvmArgs, String classPath, Duration timeout, String... args)
            throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.addAll(jvmArgs);
        cmd.add("-cp");
        cmd.add(classPath);
        cmd.add(main.getName());
        cmd.addAll(List.of(args));
        Path out = Files.createTempFile("cosched-fork", ".log");
        try {
            Process p = new ProcessBuilder(cmd)
                    .redirectErrorStream(true)
                    .redirectOutput(out.toFile())
                    .start();
            if (!p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                p.destroyForcibly();
                fail("forked " + main.getSimpleName() + " did not finish within " + timeout + ":\n"
                        + Files.readString(out, StandardCharsets.UTF_8));
            }
            return new Forked(p.exitValue(), Files.readString(out, StandardCharsets.UTF_8));
        } finally {
            Files.deleteIfExists(out);
        }
    }

    /**
     * {@code probe}'s answer on every thread of cosched's compute pool (one per core): each runs one probe and waits
     * for the others, so no thread runs two and none is left out. For checking what work left behind on them.
     */
    public static java.util.List<String> onEveryComputeThread(java.util.concurrent.Callable<String> probe)
            throws Exception {
        int threads = Runtime.getRuntime().availableProcessors();
        java.util.concurrent.CyclicBarrier all = new java.util.concurrent.CyclicBarrier(threads);
        java.util.List<java.util.concurrent.CompletableFuture<String>> answers = new java.util.ArrayList<>();
        for (int i = 0; i < threads; i++) {
            answers.add(java.util.concurrent.CompletableFuture.supplyAsync(
                    () -> {
                        try {
                            all.await(10, java.util.concurrent.TimeUnit.SECONDS);
                            return Thread.currentThread().getName() + ": " + probe.call();
                        } catch (Exception e) {
                            throw new java.util.concurrent.CompletionException(e);
                        }
                    },
                    Coroutines.computePool()));
        }
        java.util.List<String> out = new java.util.ArrayList<>();
        for (java.util.concurrent.CompletableFuture<String> a : answers) {
            out.add(a.get(20, java.util.concurrent.TimeUnit.SECONDS));
        }
        return out;
    }
}
