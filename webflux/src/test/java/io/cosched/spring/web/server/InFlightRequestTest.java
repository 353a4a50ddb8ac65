package io.cosched.spring.web.server;

import static io.cosched.TestSupport.eventually;
import static org.assertj.core.api.Assertions.assertThat;

import io.cosched.Coroutines;
import io.cosched.IOManager;
import io.cosched.TaskScope;
import io.cosched.TaskScope.Subtask;
import io.cosched.spring.web.CoschedWebStats;
import io.cosched.spring.web.stream.StreamLimits;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.reactivestreams.Subscription;
import org.springframework.mock.http.server.reactive.MockServerHttpRequest;
import org.springframework.mock.web.server.MockServerWebExchange;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.Mono;

/**
 * One request's state machine without an application: what reaches Spring (the subscriber) for a
 * value, an empty answer and an error, with Spring's request before or after the outcome, a cancel
 * (with and without cancel-on-disconnect), the deadline and shedding; and that the in-flight slot is
 * held until the handler's code has returned, whichever way the request ends.
 */
@Timeout(30)
class InFlightRequestTest {

    private static final Duration WAIT = Duration.ofSeconds(10);

    private @Nullable IOManager io;
    private CoschedWebStats stats; // of the latest requests()

    @AfterEach
    void stop() {
        if (io != null) {
            io.stop(Duration.ofSeconds(10));
        }
    }

    private CoroutineRequests requests(
            @Nullable Duration timeout, @Nullable Integer maxInFlight, boolean cancelOnDisconnect) {
        // no stall watchdog: a test holds the loop on purpose, and on a busy machine the watchdog would move the
        // request's coroutine to run elsewhere meanwhile
        io = IOManager.builder()
                .name("requests")
                .threads(1)
                .stallThreshold(Duration.ZERO)
                .build();
        io.start();
        CoroutineRequests requests =
                new CoroutineRequests(io, timeout, maxInFlight, cancelOnDisconnect, false, StreamLimits.DEFAULT);
        stats = requests.stats();
        return requests;
    }

    static <T> Outcome<T> subscribe(CoroutineRequests requests, Function<Executor, Mono<T>> handling) {
        Outcome<T> outcome = new Outcome<>();
        requests.run(MockServerWebExchange.from(MockServerHttpRequest.get("/orders/7")), handling)
                .subscribe(outcome);
        return outcome;
    }

    /** The handler's code has returned and the coroutine finished: nothing of it is still under way. */
    private void handlerFinished(long completedBefore) {
        eventually(
                WAIT,
                () -> stats.inFlight() == 0 && io.stats().completedTasks() > completedBefore,
                () -> "in flight " + stats.inFlight() + ", " + io.stats());
    }

    @Test
    void aValueReadyBeforeSpringAsksWaitsForTheRequestAndGoesOutOnce() throws Exception {
        CoroutineRequests requests = requests(null, null, true);
        long before = io.stats().completedTasks();
        Outcome<String> outcome = subscribe(requests, executor -> Mono.fromCallable(() -> "order 7"));
        handlerFinished(before);
        assertThat(outcome.signals).as("nothing goes out unasked").isEmpty();
        outcome.subscription().request(1);
        assertThat(outcome.next()).isEqualTo("next order 7");
        assertThat(outcome.next()).isEqualTo("complete");
        // asking again sends nothing more: a value goes out inside request() itself, on the asking thread
        outcome.subscription().request(1);
        assertThat(outcome.signals).isEmpty();
        assertThat(stats.coroutinesStarted()).isEqualTo(1);
    }

    @Test
    void aRequestMadeBeforeTheValueGetsItWhenTheHandlerReturns() throws Exception {
        CoroutineRequests requests = requests(null, null, true);
        CountDownLatch answer = new CountDownLatch(1);
        List<Boolean> inCoroutine = new CopyOnWriteArrayList<>();
        Outcome<String> outcome = subscribe(
                requests,
                executor -> Mono.fromCallable(() -> {
                    inCoroutine.add(Coroutines.current().isPresent());
                    answer.await();
                    return "order 7";
                }));
        outcome.subscription().request(1);
        eventually(WAIT, () -> stats.inFlight() == 1, stats::toString);
        assertThat(outcome.signals).isEmpty();
        answer.countDown();
        assertThat(outcome.next()).isEqualTo("next order 7");
        assertThat(outcome.next()).isEqualTo("complete");
        assertThat(inCoroutine).containsExactly(true);
        eventually(WAIT, () -> stats.inFlight() == 0, stats::toString);
    }

    @Test
    void anEmptyAnswerCompletesAndAnErrorFailsWithoutBeingAsked() throws Exception {
        CoroutineRequests requests = requests(null, null, true);
        Outcome<String> empty = subscribe(requests, executor -> Mono.empty());
        assertThat(empty.next()).isEqualTo("complete");
        Outcome<String> failed = subscribe(
                requests,
                executor -> Mono.fromCallable(() -> {
                    throw new IllegalStateException("no order 7");
                }));
        assertThat(failed.next()).isEqualTo("error IllegalStateException: no order 7");
        Outcome<String> thrown = subscribe(requests, executor -> {
            throw new IllegalArgumentException("bad handling");
        });
        assertThat(thrown.next()).isEqualTo("error IllegalArgumentException: bad handling");
        eventually(WAIT, () -> stats.inFlight() == 0, stats::toString);
    }

    @Test
    void aCancelInterruptsTheHandlerSendsNothingAndKeepsTheSlotUntilTheHandlerReturned() throws Exception {
        CoroutineRequests requests = requests(null, null, true);
        CountDownLatch parked = new CountDownLatch(1);
        CountDownLatch mayReturn = new CountDownLatch(1);
        BlockingQueue<String> handler = new LinkedBlockingQueue<>();
        long before = io.stats().completedTasks();
        Outcome<String> outcome = subscribe(
                requests,
                executor -> Mono.fromCallable(() -> {
                    parked.countDown();
                    try {
                        Coroutines.sleep(Duration.ofSeconds(60));
                        handler.add("slept");
                    } catch (InterruptedException e) {
                        handler.add("interrupted");
                        mayReturn.await(); // the handler's own clean-up, still holding the slot
                    }
                    return "order 7";
                }));
        outcome.subscription().request(1);
        assertThat(parked.await(10, TimeUnit.SECONDS)).isTrue();
        outcome.subscription().cancel();
        assertThat(handler.poll(10, TimeUnit.SECONDS)).isEqualTo("interrupted");
        assertThat(stats.inFlight()).as("the handler has not returned").isEqualTo(1);
        mayReturn.countDown();
        handlerFinished(before);
        assertThat(outcome.signals).as("a cancelled request answers nothing").isEmpty();
        assertThat(stats.cancelled()).isEqualTo(1);
        outcome.subscription().cancel(); // a second cancel counts nothing
        assertThat(stats.cancelled()).isEqualTo(1);
    }

    @Test
    void withoutCancelOnDisconnectACancelledHandlerRunsToItsEndAndItsValueIsDropped() throws Exception {
        CoroutineRequests requests = requests(null, null, false);
        CountDownLatch running = new CountDownLatch(1);
        CountDownLatch mayReturn = new CountDownLatch(1);
        BlockingQueue<String> handler = new LinkedBlockingQueue<>();
        long before = io.stats().completedTasks();
        Outcome<String> outcome = subscribe(
                requests,
                executor -> Mono.fromCallable(() -> {
                    running.countDown();
                    mayReturn.await();
                    handler.add(Thread.currentThread().isInterrupted() ? "interrupted" : "ran on");
                    return "order 7";
                }));
        outcome.subscription().request(1);
        assertThat(running.await(10, TimeUnit.SECONDS)).isTrue();
        outcome.subscription().cancel();
        mayReturn.countDown();
        assertThat(handler.poll(10, TimeUnit.SECONDS)).isEqualTo("ran on");
        handlerFinished(before);
        assertThat(outcome.signals).isEmpty();
        assertThat(stats.cancelled()).isEqualTo(1);
    }

    @Test
    void aHandlerPastTheDeadlineIsInterruptedAndSpringGetsATimeoutOnce() throws Exception {
        CoroutineRequests requests = requests(Duration.ofMillis(100), null, true);
        BlockingQueue<String> handler = new LinkedBlockingQueue<>();
        long before = io.stats().completedTasks();
        Outcome<String> outcome = subscribe(
                requests,
                executor -> Mono.fromCallable(() -> {
                    try {
                        Coroutines.sleep(Duration.ofSeconds(60));
                    } catch (InterruptedException e) {
                        handler.add("interrupted");
                    }
                    return "too late";
                }));
        outcome.subscription().request(1);
        assertThat(outcome.next()).startsWith("error RequestTimeoutException");
        assertThat(handler.poll(10, TimeUnit.SECONDS)).isEqualTo("interrupted");
        handlerFinished(before);
        outcome.subscription().cancel(); // Spring cancels after the error: too late to count
        assertThat(outcome.signals)
                .as("the late value does not follow the timeout")
                .isEmpty();
        assertThat(stats.timedOut()).isEqualTo(1);
        assertThat(stats.cancelled()).isZero();
    }

    @Test
    void aTaskScopeOfTheHandlerTakesTheRequestsDeadlineWithNoTimerOfItsOwn() throws Exception {
        CoroutineRequests requests = requests(Duration.ofSeconds(30), null, true);
        Outcome<String> outcome = subscribe(
                requests,
                executor -> Mono.fromCallable(() -> {
                    Coroutines.sleep(Duration.ofMillis(50));
                    long timers = io.stats().timersPending(); // the request's own deadline
                    try (TaskScope<Long, Void> scope = TaskScope.open()) {
                        // a subtask's coroutine gets the scope's deadline: the request's
                        Subtask<Long> left = scope.fork(() ->
                                Coroutines.current().orElseThrow().deadline().orElseThrow() - System.nanoTime());
                        long during = io.stats().timersPending();
                        scope.join();
                        return Duration.ofNanos(left.get()) + " " + (during - timers);
                    }
                }));
        outcome.subscription().request(1);
        String answer = outcome.next();
        assertThat(answer).startsWith("next PT").endsWith(" 0"); // no timer of the scope's own
        Duration remaining = Duration.parse(answer.substring("next ".length(), answer.indexOf(' ', 5)));
        assertThat(remaining).isLessThanOrEqualTo(Duration.ofMillis(29_950)).isGreaterThan(Duration.ofSeconds(20));
        // a request without a timeout gives its coroutine, so its scopes, none
        CoroutineRequests unlimited =
                new CoroutineRequests(io, null, AdmissionControl.fixed(null), true, false, StreamLimits.DEFAULT);
        Outcome<String> none = subscribe(
                unlimited,
                executor -> Mono.fromCallable(() -> String.valueOf(
                        Coroutines.current().orElseThrow().deadline().isPresent())));
        none.subscription().request(1);
        assertThat(none.next()).isEqualTo("next false");
    }

    @Test
    void aHandlerWithinTheDeadlineAnswersAndItsTimerIsCancelled() throws Exception {
        CoroutineRequests requests = requests(Duration.ofSeconds(30), null, true);
        Outcome<String> outcome = subscribe(requests, executor -> Mono.just("order 7"));
        outcome.subscription().request(1);
        assertThat(outcome.next()).isEqualTo("next order 7");
        assertThat(outcome.next()).isEqualTo("complete");
        eventually(
                WAIT,
                () -> stats.inFlight() == 0 && io.stats().timersPending() == 0,
                () -> io.stats().toString());
        assertThat(stats.timedOut()).isZero();
    }

    @Test
    void aRequestBeyondTheLimitIsShedAtOnceAndTheAdmittedOneIsUntouched() throws Exception {
        CoroutineRequests requests = requests(null, 1, true);
        CountDownLatch answer = new CountDownLatch(1);
        Outcome<String> admitted = subscribe(
                requests,
                executor -> Mono.fromCallable(() -> {
                    answer.await();
                    return "order 7";
                }));
        admitted.subscription().request(1);
        eventually(WAIT, () -> stats.inFlight() == 1, stats::toString);
        Outcome<String> shed = subscribe(requests, executor -> Mono.fromCallable(() -> "never"));
        assertThat(shed.next()).startsWith("error CoroutineRejectedException");
        assertThat(stats.shed()).isEqualTo(1);
        assertThat(stats.coroutinesStarted()).isEqualTo(1);
        answer.countDown();
        assertThat(admitted.next()).isEqualTo("next order 7");
        assertThat(admitted.next()).isEqualTo("complete");
        eventually(WAIT, () -> stats.inFlight() == 0, stats::toString);
        Outcome<String> later = subscribe(requests, executor -> Mono.just("order 8"));
        later.subscription().request(1);
        assertThat(later.next()).as("the slot came back").isEqualTo("next order 8");
    }

    @Test
    @Tag("carrier-only") // in fallback mode the coroutine does not wait for the busy loop
    void aCancelBeforeTheCoroutineRanMeansItsHandlerNeverRuns() throws Exception {
        CoroutineRequests requests = requests(null, null, true);
        // the only loop is busy, so the request's coroutine waits in its queue while Spring cancels
        CountDownLatch loopBusy = new CountDownLatch(1);
        CountDownLatch freeLoop = new CountDownLatch(1);
        io.eventLoop(0).execute(() -> {
            loopBusy.countDown();
            try {
                freeLoop.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        assertThat(loopBusy.await(10, TimeUnit.SECONDS)).isTrue();
        List<String> ran = new CopyOnWriteArrayList<>();
        long before = io.stats().completedTasks();
        Outcome<String> outcome = subscribe(requests, executor -> {
            ran.add("handling");
            return Mono.just("order 7");
        });
        outcome.subscription().request(1);
        outcome.subscription().cancel();
        freeLoop.countDown();
        handlerFinished(before);
        assertThat(ran).isEmpty();
        assertThat(outcome.signals).isEmpty();
        assertThat(stats.cancelled()).isEqualTo(1);
    }

    /** What Spring would see: signals as lines, in order. */
    static final class Outcome<T> implements CoreSubscriber<T> {
        final BlockingQueue<String> signals = new LinkedBlockingQueue<>();
        private volatile @Nullable Subscription subscription;

        Subscription subscription() {
            Subscription s = subscription;
            assertThat(s).as("onSubscribe came first").isNotNull();
            return s;
        }

        String next() throws InterruptedException {
            String s = signals.poll(10, TimeUnit.SECONDS);
            assertThat(s).as("a signal within 10 s").isNotNull();
            return s;
        }

        @Override
        public void onSubscribe(Subscription s) {
            subscription = s;
        }

        @Override
        public void onNext(T t) {
            signals.add("next " + t);
        }

        @Override
        public void onError(Throwable t) {
            signals.add("error " + t.getClass().getSimpleName() + ": " + t.getMessage());
        }

        @Override
        public void onComplete() {
            signals.add("complete");
        }
    }
}
