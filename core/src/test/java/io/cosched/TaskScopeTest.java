package io.cosched;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cosched.TaskScope.Joiner;
import io.cosched.TaskScope.Subtask;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.UnaryOperator;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Structured fan-out: each policy, the deadline, and cancellation in every order (a sibling fails, one succeeds,
 * the deadline passes, the owner is interrupted, the scope is closed early), the bound on forks in flight, where
 * subtasks run, and that no subtask outlives its scope. Owners run as coroutines of an IOManager with two loops.
 */
@Timeout(30)
class TaskScopeTest {

    private final IOManager io = IOManager.builder()
            .name("scope")
            .threads(2)
            .stallThreshold(Duration.ZERO)
            .build();

    {
        io.start();
    }

    @AfterEach
    void stop() {
        io.stop(Duration.ofSeconds(10));
    }

    /** Runs {@code body} as a coroutine on loop 0 and returns what it returns, or throws what it threw. */
    private <V> V owner(java.util.concurrent.Callable<V> body) throws Exception {
        try {
            return io.spawnOn(0, body).join();
        } catch (ExecutionException e) {
            if (e.getCause() instanceof Exception x) {
                throw x;
            }
            throw e;
        }
    }

    /** A subtask that says it started, waits until it is cancelled, and counts its end. */
    private static java.util.concurrent.Callable<Object> untilCancelled(CountDownLatch started, AtomicInteger ended) {
        return () -> {
            started.countDown();
            try {
                Coroutines.sleep(Duration.ofSeconds(60));
                return null;
            } finally {
                ended.incrementAndGet();
            }
        };
    }

    @Test
    void allSucceedingForksRunTogetherAndJoinGivesTheirValues() throws Exception {
        CountDownLatch together = new CountDownLatch(3); // passes only when the three run at once
        List<String> where = new CopyOnWriteArrayList<>();
        String result = owner(() -> {
            try (TaskScope<String, Void> scope = TaskScope.open()) {
                List<Subtask<String>> forks = List.of(1, 2, 3).stream()
                        .map(i -> scope.fork(() -> {
                            where.add(Thread.currentThread().toString());
                            together.countDown();
                            assertThat(together.await(10, TimeUnit.SECONDS)).isTrue();
                            return "v" + i;
                        }))
                        .toList();
                assertThat(scope.join()).isNull();
                return String.join(",", forks.stream().map(Subtask::get).toList());
            }
        });
        assertThat(result).isEqualTo("v1,v2,v3");
        assertThat(where).hasSize(3).allSatisfy(t -> assertThat(t).startsWith("VirtualThread["));
    }

    @Test
    @Tag("carrier-only")
    void forksRunOnTheOwnersLoopByDefault() throws Exception {
        List<String> where = new CopyOnWriteArrayList<>();
        owner(() -> {
            try (TaskScope<Object, Void> scope = TaskScope.open()) {
                for (int i = 0; i < 4; i++) {
                    scope.fork(() -> where.add(Thread.currentThread().toString()));
                }
                scope.join();
            }
            return null;
        });
        assertThat(where).hasSize(4).allSatisfy(t -> assertThat(t).endsWith("@scope-0"));
    }

    @Test
    void theFirstFailureCancelsItsSiblingsAndIsThrown() throws Exception {
        AtomicReference<Throwable> siblingEndedWith = new AtomicReference<>();
        AtomicReference<Subtask<Object>> sibling = new AtomicReference<>();
        assertThatThrownBy(() -> owner(() -> {
                    try (TaskScope<Object, Void> scope = TaskScope.open()) {
                        sibling.set(scope.fork(() -> {
                            try {
                                Coroutines.sleep(Duration.ofSeconds(60));
                                return "never";
                            } catch (InterruptedException e) {
                                siblingEndedWith.set(e);
                                throw e;
                            }
                        }));
                        scope.fork(() -> {
                            throw new IllegalStateException("price service down");
                        });
                        return scope.join();
                    }
                }))
                .isInstanceOf(TaskScope.FailedException.class)
                .hasMessageContaining("price service down")
                .hasCauseInstanceOf(IllegalStateException.class)
                .satisfies(e -> assertThat(e.getSuppressed())
                        .as("a sibling's interrupt is no failure of its own")
                        .isEmpty());
        // join returned only after the sibling had ended
        assertThat(siblingEndedWith.get()).isInstanceOf(InterruptedException.class);
        assertThat(sibling.get().state()).isEqualTo(Subtask.State.FAILED);
    }

    @Test
    void failuresBeforeTheAnswerAreSuppressedBehindTheFirst() throws Exception {
        CountDownLatch both = new CountDownLatch(2);
        // a policy that waits for all and then fails: every failure happened before it had its answer
        Joiner<Object, Void> allThenFail = new Joiner<>() {
            private final List<Throwable> failures = new CopyOnWriteArrayList<>();

            @Override
            public boolean onComplete(Subtask<?> subtask) {
                if (subtask.state() == Subtask.State.FAILED) {
                    failures.add(subtask.exception());
                }
                return false;
            }

            @Override
            public Void result() throws Throwable {
                throw failures.get(0);
            }
        };
        assertThatThrownBy(() -> owner(() -> {
                    try (TaskScope<Object, Void> scope = TaskScope.open(allThenFail)) {
                        for (String name : List.of("stock", "reviews")) {
                            scope.fork(() -> {
                                both.countDown();
                                both.await();
                                throw new IllegalStateException(name + " down");
                            });
                        }
                        return scope.join();
                    }
                }))
                .isInstanceOf(TaskScope.FailedException.class)
                .satisfies(e -> assertThat(e.getSuppressed())
                        .hasSize(1)
                        .allSatisfy(s -> assertThat(s).hasMessageEndingWith(" down")));
    }

    @Test
    void theFirstSuccessWinsAndTheOthersAreCancelled() throws Exception {
        AtomicInteger interrupted = new AtomicInteger();
        String winner = owner(() -> {
            try (TaskScope<String, String> scope = TaskScope.open(Joiner.anySuccessfulResultOrThrow())) {
                for (int i = 0; i < 3; i++) {
                    scope.fork(() -> {
                        try {
                            Coroutines.sleep(Duration.ofSeconds(60));
                        } catch (InterruptedException e) {
                            interrupted.incrementAndGet();
                            throw e;
                        }
                        return "slow";
                    });
                }
                scope.fork(() -> "fast");
                String r = scope.join();
                assertThat(interrupted.get())
                        .as("the losers ended before join returned")
                        .isEqualTo(3);
                return r;
            }
        });
        assertThat(winner).isEqualTo("fast");
    }

    @Test
    void whenNoneSucceedsTheFailureIsThrown() throws Exception {
        assertThatThrownBy(() -> owner(() -> {
                    try (TaskScope<String, String> scope = TaskScope.open(Joiner.anySuccessfulResultOrThrow())) {
                        scope.fork(() -> {
                            throw new IllegalStateException("mirror 1 down");
                        });
                        return scope.join();
                    }
                }))
                .isInstanceOf(TaskScope.FailedException.class)
                .hasRootCauseMessage("mirror 1 down");
    }

    @Test
    void awaitAllCollectsEveryOutcome() throws Exception {
        List<Subtask.State> states = owner(() -> {
            try (TaskScope<String, Void> scope = TaskScope.open(Joiner.awaitAll())) {
                Subtask<String> ok = scope.fork(() -> "ok");
                Subtask<String> bad = scope.fork(() -> {
                    throw new IllegalArgumentException("bad");
                });
                scope.join();
                assertThat(bad.exception()).hasMessage("bad");
                assertThatThrownBy(bad::get).isInstanceOf(IllegalStateException.class);
                return List.of(ok.state(), bad.state());
            }
        });
        assertThat(states).containsExactly(Subtask.State.SUCCESS, Subtask.State.FAILED);
    }

    @Test
    void allSuccessfulOrThrowGivesTheSubtasksInForkOrder() throws Exception {
        List<Integer> values = owner(() -> {
            try (TaskScope<Integer, java.util.stream.Stream<Subtask<Integer>>> scope =
                    TaskScope.open(Joiner.allSuccessfulOrThrow())) {
                for (int i = 1; i <= 4; i++) {
                    int v = i;
                    scope.fork(() -> v);
                }
                return scope.join().map(Subtask::get).toList();
            }
        });
        assertThat(values).containsExactly(1, 2, 3, 4);
    }

    @Test
    void pastTheDeadlineJoinThrowsAndTheForksHaveEnded() throws Exception {
        AtomicInteger ended = new AtomicInteger();
        long started = System.nanoTime();
        assertThatThrownBy(() -> owner(() -> {
                    try (TaskScope<Object, Void> scope = TaskScope.open(
                            Joiner.awaitAllSuccessfulOrThrow(),
                            c -> c.withName("offer").withTimeout(Duration.ofMillis(200)))) {
                        for (int i = 0; i < 3; i++) {
                            scope.fork(untilCancelled(new CountDownLatch(3), ended));
                        }
                        try {
                            return scope.join();
                        } finally {
                            assertThat(ended.get())
                                    .as("every fork ended before join threw")
                                    .isEqualTo(3);
                            assertThat(scope.isCancelled()).isTrue();
                        }
                    }
                }))
                .isInstanceOf(TaskScope.TimeoutException.class)
                .hasMessage("scope 'offer' timed out after PT0.2S: its unfinished subtasks were cancelled");
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started)).isLessThan(10_000);
    }

    @Test
    void anInterruptedOwnerCancelsItsForksAndWaitsForThem() throws Exception {
        CountDownLatch forked = new CountDownLatch(2);
        AtomicInteger ended = new AtomicInteger();
        Coroutine<Object> owner = io.spawnOn(0, () -> {
            try (TaskScope<Object, Void> scope = TaskScope.open()) {
                for (int i = 0; i < 2; i++) {
                    scope.fork(untilCancelled(forked, ended));
                }
                try {
                    return scope.join();
                } catch (InterruptedException e) {
                    return "interrupted, forks ended: " + ended.get();
                }
            }
        });
        assertThat(forked.await(10, TimeUnit.SECONDS)).isTrue();
        owner.interrupt();
        assertThat(owner.join()).isEqualTo("interrupted, forks ended: 2");
    }

    @Test
    void closingEarlyCancelsTheForksAndWaitsForThem() throws Exception {
        CountDownLatch forked = new CountDownLatch(1);
        AtomicInteger ended = new AtomicInteger();
        int endedAtClose = owner(() -> {
            TaskScope<Object, Void> scope = TaskScope.open();
            scope.fork(untilCancelled(forked, ended));
            forked.await();
            scope.close(); // the owner gives up without joining: an exception left the try block, say
            return ended.get();
        });
        assertThat(endedAtClose).isEqualTo(1);
    }

    @Test
    void aForkInsideAShieldIsInterruptedOnlyOnceTheShieldCloses() throws Exception {
        List<String> events = new CopyOnWriteArrayList<>();
        assertThatThrownBy(() -> owner(() -> {
                    try (TaskScope<Object, Void> scope = TaskScope.open()) {
                        CountDownLatch shielded = new CountDownLatch(1);
                        scope.fork(() -> {
                            try (Shield s = Coroutines.shield(() -> events.add("asked to stop"))) {
                                shielded.countDown();
                                Coroutines.sleep(Duration.ofMillis(300)); // a statement on a pooled connection, say
                                events.add("statement done");
                            }
                            Coroutines.sleep(Duration.ofSeconds(60)); // the interrupt arrives here
                            return null;
                        });
                        shielded.await();
                        scope.fork(() -> {
                            throw new IllegalStateException("sibling failed");
                        });
                        return scope.join();
                    }
                }))
                .isInstanceOf(TaskScope.FailedException.class);
        assertThat(events).containsExactly("asked to stop", "statement done");
    }

    @Test
    void atMostMaxForksRunAtOnce() throws Exception {
        AtomicInteger now = new AtomicInteger();
        AtomicInteger most = new AtomicInteger();
        owner(() -> {
            try (TaskScope<Object, Void> scope =
                    TaskScope.open(Joiner.awaitAllSuccessfulOrThrow(), c -> c.withMaxForks(2))) {
                for (int i = 0; i < 6; i++) {
                    scope.fork(() -> {
                        most.accumulateAndGet(now.incrementAndGet(), Math::max);
                        Coroutines.sleep(Duration.ofMillis(20));
                        now.decrementAndGet();
                        return null;
                    });
                }
                return scope.join();
            }
        });
        assertThat(most.get()).isEqualTo(2);
    }

    @Test
    void aForkCanRunOnTheComputePoolOrAnyLoop() throws Exception {
        List<String> where = owner(() -> {
            try (TaskScope<String, Void> scope = TaskScope.open()) {
                Subtask<String> compute =
                        scope.fork(() -> Thread.currentThread().getName(), TaskScope.Placement.COMPUTE);
                Subtask<String> any = scope.fork(
                        () -> String.valueOf(Coroutines.current().isPresent()), TaskScope.Placement.ANY_LOOP);
                scope.join();
                return List.of(compute.get(), any.get());
            }
        });
        assertThat(where.get(0)).startsWith("cosched-compute-");
        assertThat(where.get(1)).isEqualTo("true");
    }

    @Test
    void onlyTheOwnerForksJoinsAndCloses() throws Exception {
        TaskScope<Object, Void> scope = TaskScope.open();
        Coroutine<Void> other = io.spawn(() -> {
            scope.fork(() -> "x");
        });
        assertThatThrownBy(other::join)
                .hasCauseInstanceOf(IllegalStateException.class)
                .cause()
                .hasMessageContaining("fork by")
                .hasMessageContaining("(expected: its owner");
        scope.join();
        assertThatThrownBy(() -> scope.fork(() -> "late"))
                .isInstanceOf(IllegalStateException.class)
                .hasMessage("scope 'scope': fork after join");
        scope.close();
    }

    /** A hook that carries a thread-local of the owner into each subtask. */
    private static final ThreadLocal<String> REQUEST = new ThreadLocal<>();

    private static ScopeHook requestHook() {
        return new ScopeHook() {
            @Override
            public Callable<Object> decorate(String scope, Callable<Object> task) {
                String captured = REQUEST.get(); // in the owner, at fork
                return () -> {
                    REQUEST.set(captured);
                    try {
                        return task.call();
                    } finally {
                        REQUEST.remove();
                    }
                };
            }
        };
    }

    @Test
    void theSchedulersHookCarriesTheOwnersContextIntoEachFork() throws Exception {
        try (IOManager hooked = IOManager.builder()
                .name("hooked")
                .threads(1)
                .stallThreshold(Duration.ZERO)
                .scopeHook(requestHook())
                .build()) {
            hooked.start();
            List<String> seen = hooked.spawn(() -> {
                        REQUEST.set("order-42");
                        try (TaskScope<String, Void> scope = TaskScope.open()) {
                            Subtask<String> a = scope.fork(REQUEST::get);
                            Subtask<String> b = scope.fork(REQUEST::get, TaskScope.Placement.COMPUTE);
                            scope.join();
                            return List.of(a.get(), b.get());
                        } finally {
                            REQUEST.remove();
                        }
                    })
                    .join();
            assertThat(seen).containsExactly("order-42", "order-42");
            // a compute thread goes on to other work: nothing of the owner's is left on any of them
            assertThat(TestSupport.onEveryComputeThread(() -> String.valueOf(REQUEST.get())))
                    .hasSize(Runtime.getRuntime().availableProcessors())
                    .allSatisfy(t -> assertThat(t).endsWith(": null"));
        }
    }

    @Test
    void interruptingAnOwnerBusyElsewhereCancelsItsForksAtOnce() throws Exception {
        CountDownLatch forked = new CountDownLatch(1);
        CountDownLatch forkEnded = new CountDownLatch(1);
        CountDownLatch shielded = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        Coroutine<Object> owner = io.spawnOn(0, () -> {
            try (TaskScope<Object, Void> scope = TaskScope.open()) {
                scope.fork(() -> {
                    forked.countDown();
                    try {
                        Coroutines.sleep(Duration.ofSeconds(60));
                        return null;
                    } finally {
                        forkEnded.countDown();
                    }
                });
                // the owner's own blocking call, which must not be cut (a query on a pooled connection, say)
                try (Shield ignored = Coroutines.shield(() -> {})) {
                    shielded.countDown();
                    release.await();
                }
                try {
                    return scope.join();
                } catch (InterruptedException e) {
                    return "interrupted";
                }
            }
        });
        assertThat(forked.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(shielded.await(10, TimeUnit.SECONDS)).isTrue();
        owner.interrupt();
        // the fork ends while the owner is still inside its shield
        assertThat(forkEnded.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(owner.state()).isNotEqualTo(CoroutineState.DONE);
        release.countDown();
        assertThat(owner.join()).isEqualTo("interrupted");
    }

    @Test
    void theSchedulerCountsForksAndTheirEnds() throws Exception {
        SchedulerStats before = io.stats();
        owner(() -> {
            try (TaskScope<Object, Void> scope = TaskScope.open()) {
                scope.fork(() -> "fine");
                return scope.join();
            }
        });
        assertThatThrownBy(() -> owner(() -> {
                    try (TaskScope<Object, Void> scope = TaskScope.open()) {
                        scope.fork(untilCancelled(new CountDownLatch(1), new AtomicInteger()));
                        scope.fork(() -> {
                            throw new IllegalStateException("down");
                        });
                        return scope.join();
                    }
                }))
                .isInstanceOf(TaskScope.FailedException.class);
        SchedulerStats after = io.stats();
        assertThat(after.forks() - before.forks()).isEqualTo(3);
        assertThat(after.forksFailed() - before.forksFailed()).isEqualTo(1);
        assertThat(after.forksCancelled() - before.forksCancelled()).isEqualTo(1);
    }

    @Test
    void aForksCoroutineNamesItsScopeAndOwnerForDumps() throws Exception {
        String attachment = owner(() -> {
            Coroutines.current().orElseThrow().attach("GET /offers/{sku}");
            try (TaskScope<String, Void> scope =
                    TaskScope.open(Joiner.awaitAllSuccessfulOrThrow(), c -> c.withName("offer"))) {
                Subtask<String> seen = scope.fork(
                        () -> String.valueOf(Coroutines.current().orElseThrow().attachment()));
                scope.join();
                return seen.get();
            }
        });
        assertThat(attachment).isEqualTo("subtask of scope 'offer' (UNAVAILABLE) of GET /offers/{sku}");
    }

    // ---- the owner's deadline (Coroutine.deadline): one deadline, enforced by whoever set it ----

    /**
     * Runs a scope configured by {@code configure} in a coroutine whose deadline passed an hour ago, with one fork
     * that waits to be released; returns the timers pending on the IOManager while the owner joins, and what join
     * gave (nobody interrupts the owner: the deadline's enforcer is absent).
     */
    private String joinPastTheOwnersDeadline(UnaryOperator<TaskScope.Config> configure) throws Exception {
        CountDownLatch started = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        Coroutine<String> owner = io.spawnOn(0, () -> {
            Coroutines.current().orElseThrow().deadline(System.nanoTime() - TimeUnit.HOURS.toNanos(1));
            try (TaskScope<Object, Void> scope = TaskScope.open(Joiner.awaitAll(), configure)) {
                scope.fork(() -> {
                    started.countDown();
                    release.await();
                    return null;
                });
                try {
                    scope.join();
                    return "joined: " + scope;
                } catch (TaskScope.TimeoutException e) {
                    return "timed out";
                }
            }
        });
        assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
        TestSupport.eventually(
                Duration.ofSeconds(10),
                () -> owner.state() == CoroutineState.WAITING,
                () -> "the owner never joined: " + owner);
        int pending = io.timers().pending();
        release.countDown();
        return pending + " timers while joining, " + owner.join();
    }

    @Test
    void aScopeWithoutATimeoutTakesItsOwnersDeadlineWithNoTimerOfItsOwn() throws Exception {
        // the deadline passed long ago, but only its enforcer ends the scope, by interrupting the owner
        assertThat(joinPastTheOwnersDeadline(c -> c))
                .matches(
                        "0 timers while joining, joined: TaskScope\\[scope, running 0, deadline passed 360\\d{4} ms ago]");
        // a timeout of its own is a timer of its own while the owner joins (the earlier deadline is still the owner's)
        assertThat(joinPastTheOwnersDeadline(c -> c.withTimeout(Duration.ofMinutes(10))))
                .matches(
                        "1 timers while joining, joined: TaskScope\\[scope, running 0, deadline passed 360\\d{4} ms ago]");
    }

    @Test
    void theEnforcersInterruptEndsAScopeThatInheritedItsDeadline(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("deadline.jfr");
        CountDownLatch forked = new CountDownLatch(1);
        AtomicInteger ended = new AtomicInteger();
        try (Recording recording = new Recording()) {
            recording.enable("io.cosched.ForkCancelled");
            recording.start();
            Coroutine<Object> owner = io.spawnOn(0, () -> {
                Coroutines.current().orElseThrow().deadline(System.nanoTime() - 1); // due: the enforcer comes
                try (TaskScope<Object, Void> scope = TaskScope.open()) {
                    scope.fork(untilCancelled(forked, ended));
                    try {
                        return scope.join();
                    } catch (InterruptedException e) {
                        return "interrupted, forks ended: " + ended.get();
                    }
                }
            });
            assertThat(forked.await(10, TimeUnit.SECONDS)).isTrue();
            owner.interrupt(); // what the request's timer does when the request's time is up
            assertThat(owner.join()).isEqualTo("interrupted, forks ended: 1");
            recording.stop();
            recording.dump(file);
        }
        List<RecordedEvent> events = RecordingFile.readAllEvents(file).stream()
                .filter(e -> e.getEventType().getName().equals("io.cosched.ForkCancelled"))
                .toList();
        assertThat(events).hasSize(1);
        assertThat(events.get(0).getString("reason")).isEqualTo("its owner's deadline passed");
        assertThat(events.get(0).getDuration("deadlineIn")).isNegative();
    }

    @Test
    void aTimeoutShorterThanTheOwnersDeadlineStillTimesTheScopeOut() throws Exception {
        AtomicInteger ended = new AtomicInteger();
        assertThatThrownBy(() -> owner(() -> {
                    Coroutines.current().orElseThrow().deadline(System.nanoTime() + TimeUnit.HOURS.toNanos(1));
                    try (TaskScope<Object, Void> scope =
                            TaskScope.open(Joiner.awaitAll(), c -> c.withTimeout(Duration.ofMillis(50)))) {
                        scope.fork(untilCancelled(new CountDownLatch(1), ended));
                        return scope.join();
                    }
                }))
                .isInstanceOf(TaskScope.TimeoutException.class)
                .hasMessage("scope 'scope' timed out after PT0.05S: its unfinished subtasks were cancelled");
        assertThat(ended.get()).isEqualTo(1);
    }

    @Test
    void aForkGetsTheEarlierOfItsScopesTimeoutAndItsOwnersDeadline() throws Exception {
        long hour = TimeUnit.HOURS.toNanos(1);
        long tenMinutes = TimeUnit.MINUTES.toNanos(10);
        // the scope's timeout comes first: the fork's deadline is the scope's
        long[] seen = owner(() -> {
            Coroutines.current().orElseThrow().deadline(System.nanoTime() + hour);
            long before = System.nanoTime();
            try (TaskScope<Long, Void> scope =
                    TaskScope.open(Joiner.awaitAll(), c -> c.withTimeout(Duration.ofMinutes(10)))) {
                long after = System.nanoTime();
                Subtask<Long> fork = scope.fork(
                        () -> Coroutines.current().orElseThrow().deadline().orElseThrow());
                scope.join();
                return new long[] {before + tenMinutes, fork.get(), after + tenMinutes};
            }
        });
        assertThat(seen[1]).isBetween(seen[0], seen[2]);
        // the owner's deadline comes first: the fork's deadline is the owner's
        long[] owners = owner(() -> {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            Coroutines.current().orElseThrow().deadline(deadline);
            try (TaskScope<Long, Void> scope =
                    TaskScope.open(Joiner.awaitAll(), c -> c.withTimeout(Duration.ofMinutes(10)))) {
                Subtask<Long> fork = scope.fork(
                        () -> Coroutines.current().orElseThrow().deadline().orElseThrow());
                scope.join();
                return new long[] {deadline, fork.get()};
            }
        });
        assertThat(owners[1]).isEqualTo(owners[0]);
    }

    @Test
    void aScopeOpenedInAForkFindsTheDeadlineOnALoopAndOnTheComputePool() throws Exception {
        List<String> nested = owner(() -> {
            Coroutines.current().orElseThrow().deadline(System.nanoTime() + TimeUnit.HOURS.toNanos(1));
            try (TaskScope<String, Void> scope = TaskScope.open(Joiner.awaitAll(), c -> c.withName("outer"))) {
                Callable<String> opensOne = () -> {
                    try (TaskScope<Object, Void> inner = TaskScope.open(Joiner.awaitAll(), c -> c.withName("inner"))) {
                        inner.fork(() -> null);
                        inner.join();
                        return inner.toString();
                    }
                };
                Subtask<String> onLoop = scope.fork(opensOne);
                Subtask<String> onCompute = scope.fork(opensOne, TaskScope.Placement.COMPUTE);
                scope.join();
                return List.of(onLoop.get(), onCompute.get());
            }
        });
        assertThat(nested)
                .allMatch(s -> s.matches("TaskScope\\[inner, running 0, deadline in 3599\\d{3} ms]"), "one hour");
        // a compute thread goes on to other work without the subtask's deadline
        assertThat(TestSupport.onEveryComputeThread(() -> {
                    try (TaskScope<Object, Void> scope = TaskScope.open()) {
                        return scope.toString();
                    }
                }))
                .allSatisfy(t -> assertThat(t).endsWith(": TaskScope[scope, running 0]"));
    }

    @Test
    void aForksCoroutineShowsItsDeadlineInDumps() throws Exception {
        String attachment = owner(() -> {
            Coroutine<?> me = Coroutines.current().orElseThrow();
            me.attach("GET /offers/{sku}");
            me.deadline(System.nanoTime() + TimeUnit.SECONDS.toNanos(30));
            try (TaskScope<String, Void> scope =
                    TaskScope.open(Joiner.awaitAllSuccessfulOrThrow(), c -> c.withName("offer"))) {
                Subtask<String> seen = scope.fork(
                        () -> String.valueOf(Coroutines.current().orElseThrow().attachment()));
                scope.join();
                return seen.get();
            }
        });
        assertThat(attachment)
                .matches("subtask of scope 'offer' \\(UNAVAILABLE, deadline in 29\\d{3} ms\\) of GET /offers/\\{sku}");
    }

    @Test
    void aCoroutinesDeadlineIsSetReadAndClearedThroughItsHandle() throws Exception {
        Coroutine<Object> c = io.spawn(() -> null);
        c.join();
        assertThat(c.deadline()).isEmpty();
        c.deadline(42);
        assertThat(c.deadline()).hasValue(42);
        c.clearDeadline();
        assertThat(c.deadline()).isEmpty();
    }

    @Test
    void aCancelledForkIsRecordedForFlightRecorder(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("forks.jfr");
        try (Recording recording = new Recording()) {
            recording.enable("io.cosched.ForkCancelled");
            recording.start();
            assertThatThrownBy(() -> owner(() -> {
                        Coroutines.current().orElseThrow().attach("GET /offers/7");
                        try (TaskScope<Object, Void> scope =
                                TaskScope.open(Joiner.awaitAllSuccessfulOrThrow(), c -> c.withName("offer"))) {
                            CountDownLatch started = new CountDownLatch(1);
                            scope.fork(untilCancelled(started, new AtomicInteger()));
                            started.await();
                            scope.fork(() -> {
                                throw new IllegalStateException("stock service down");
                            });
                            return scope.join();
                        }
                    }))
                    .isInstanceOf(TaskScope.FailedException.class);
            recording.stop();
            recording.dump(file);
        }
        // a fallback-mode JVM also starts each chunk with its periodic CarrierModeFallback event
        List<RecordedEvent> events = RecordingFile.readAllEvents(file).stream()
                .filter(e -> e.getEventType().getName().equals("io.cosched.ForkCancelled"))
                .toList();
        assertThat(events).hasSize(1);
        RecordedEvent e = events.get(0);
        assertThat(e.getString("scope")).isEqualTo("offer");
        assertThat(e.getString("owner")).isEqualTo("GET /offers/7");
        assertThat(e.getString("reason")).isEqualTo("its policy had its answer");
        assertThat(e.getDuration("ranFor")).isPositive();
    }
}
