package io.cosched.spring.web.server;

import static io.cosched.TestSupport.eventually;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cosched.IOManager;
import io.cosched.spring.web.CoschedWebStats;
import io.cosched.spring.web.server.InFlightRequestTest.Outcome;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.RepeatedTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.http.HttpStatus;
import org.springframework.mock.http.server.reactive.MockServerHttpRequest;
import org.springframework.mock.web.server.MockServerWebExchange;
import reactor.core.publisher.Mono;

/**
 * The admission queue: a request over the limit waits for a slot in arrival order, is shed when the queue is full or
 * its time runs out, leaves it when cancelled; and under racing ends and arrivals no slot and no waiter is lost.
 */
@Timeout(30)
class AdmissionQueueTest {

    private static final Duration WAIT = Duration.ofSeconds(10);

    private @Nullable IOManager io;
    private CoschedWebStats stats;

    @AfterEach
    void stop() {
        if (io != null) {
            io.stop(Duration.ofSeconds(10));
        }
    }

    private CoroutineRequests requests(AdmissionControl admission) {
        io = IOManager.builder()
                .name("admission")
                .threads(2)
                .stallThreshold(Duration.ZERO)
                .build();
        io.start();
        CoroutineRequests requests = CoroutineRequests.builder(io)
                .admission(admission)
                .annotatedOnly(false)
                .build();
        stats = requests.stats();
        return requests;
    }

    /** A request as Spring makes it, already asked for its outcome. */
    private static <T> Outcome<T> subscribe(CoroutineRequests requests, Function<Executor, Mono<T>> handling) {
        Outcome<T> outcome = InFlightRequestTest.subscribe(requests, handling);
        outcome.subscription().request(1);
        return outcome;
    }

    /** A handler that answers {@code answer} once {@code release} opens. */
    private static Function<Executor, Mono<String>> waitsFor(CountDownLatch release, String answer) {
        return executor -> Mono.fromCallable(() -> {
            release.await();
            return answer;
        });
    }

    @Test
    void theBuilderGivesItsAdmissionAndNamesABadSetting() {
        CoroutineRequests requests = requests(AdmissionControl.fixed(7));
        assertThat(stats.limit()).isEqualTo(7);
        assertThat(requests.stats().inFlight()).isZero();
        assertThatThrownBy(() -> CoroutineRequests.builder(io).timeout(Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("timeout");
    }

    @Test
    void requestsOverTheLimitWaitInArrivalOrderAndTheOneBeyondTheQueueIsShedAtOnce() throws Exception {
        CoroutineRequests requests = requests(AdmissionControl.fixed(1).withQueue(2, Duration.ofSeconds(20)));
        CountDownLatch first = new CountDownLatch(1);
        List<String> order = new ArrayList<>();
        Outcome<String> admitted = subscribe(requests, waitsFor(first, "first"));
        eventually(WAIT, () -> stats.inFlight() == 1, stats::toString);
        Outcome<String> second = subscribe(
                requests,
                executor -> Mono.fromCallable(() -> {
                    synchronized (order) {
                        order.add("second");
                    }
                    return "second";
                }));
        Outcome<String> third = subscribe(
                requests,
                executor -> Mono.fromCallable(() -> {
                    synchronized (order) {
                        order.add("third");
                    }
                    return "third";
                }));
        assertThat(stats.queued()).isEqualTo(2);
        Outcome<String> shed = subscribe(requests, executor -> Mono.just("never"));
        assertThat(shed.next())
                .isEqualTo(
                        "error CoroutineRejectedException: too many requests in flight (cosched.web.max-in-flight: 1)");
        assertThat(second.signals).as("waiting, not shed").isEmpty();
        assertThat(stats.shed()).isEqualTo(1);
        assertThat(stats.coroutinesStarted()).isEqualTo(1);

        first.countDown();
        assertThat(admitted.next()).isEqualTo("next first");
        assertThat(second.next()).isEqualTo("next second");
        assertThat(third.next()).isEqualTo("next third");
        synchronized (order) {
            assertThat(order).containsExactly("second", "third");
        }
        eventually(WAIT, () -> stats.inFlight() == 0 && stats.queued() == 0, stats::toString);
        assertThat(stats.coroutinesStarted()).isEqualTo(3);
        assertThat(stats.shed()).isEqualTo(1);
        assertThat(stats.queueTimedOut()).isZero();
        assertThat(stats.offLoop())
                .as("a queued request started by another's end")
                .isZero();
        eventually(WAIT, () -> io.stats().timersPending() == 0, () -> "queue timers cancelled: " + io.stats());
    }

    @Test
    void aRequestThatWaitsOutTheQueueTimeoutIsShedWithTheStatusConfigured() throws Exception {
        CoroutineRequests requests = requests(
                AdmissionControl.fixed(1).withQueue(1, Duration.ofMillis(50)).withStatus(HttpStatus.TOO_MANY_REQUESTS));
        CountDownLatch release = new CountDownLatch(1);
        Outcome<String> admitted = subscribe(requests, waitsFor(release, "first"));
        eventually(WAIT, () -> stats.inFlight() == 1, stats::toString);
        AtomicInteger ran = new AtomicInteger();
        Outcome<String> waited = subscribe(
                requests,
                executor -> Mono.fromCallable(() -> {
                    ran.incrementAndGet();
                    return "late";
                }));
        assertThat(waited.next())
                .isEqualTo(
                        "error CoroutineRejectedException: no slot within cosched.web.admission.queue-timeout (50 ms;"
                                + " too many requests in flight (cosched.web.max-in-flight: 1))");
        assertThat(stats.shed()).isEqualTo(1);
        assertThat(stats.queueTimedOut()).isEqualTo(1);
        assertThat(stats.queued()).isZero();
        release.countDown();
        assertThat(admitted.next()).isEqualTo("next first");
        eventually(WAIT, () -> stats.inFlight() == 0, stats::toString);
        assertThat(ran).as("a request shed from the queue never runs").hasValue(0);
        // while the slot stays taken, requests that time out in the queue leave it for good
        CountDownLatch hold = new CountDownLatch(1);
        Outcome<String> holder = subscribe(requests, waitsFor(hold, "held"));
        eventually(WAIT, () -> stats.inFlight() == 1, stats::toString);
        for (int i = 0; i < 50; i++) {
            assertThat(subscribe(requests, executor -> Mono.just("late")).next())
                    .startsWith("error CoroutineRejectedException: no slot within");
        }
        assertThat(requests.admission().waiting())
                .as("timed-out waiters kept in the queue")
                .isZero();
        hold.countDown();
        assertThat(holder.next()).isEqualTo("next held");
        // the 429 goes out as the exception handler answers it, with Retry-After
        MockServerWebExchange answered = MockServerWebExchange.from(MockServerHttpRequest.get("/orders/7"));
        requests.exceptionHandler()
                .handle(answered, requests.admission().queueTimeout())
                .block(WAIT);
        assertThat(answered.getResponse().getStatusCode()).isEqualTo(HttpStatus.TOO_MANY_REQUESTS);
        assertThat(answered.getResponse().getHeaders().getFirst("Retry-After")).isEqualTo("1");
        assertThat(requests.admission().rejectionProblem()).contains("\"status\":429", "Too Many Requests");
    }

    @Test
    void aRequestCancelledWhileQueuedLeavesTheQueueAndTheSlotGoesToTheNext() throws Exception {
        CoroutineRequests requests = requests(AdmissionControl.fixed(1).withQueue(2, Duration.ofSeconds(20)));
        CountDownLatch release = new CountDownLatch(1);
        Outcome<String> admitted = subscribe(requests, waitsFor(release, "first"));
        eventually(WAIT, () -> stats.inFlight() == 1, stats::toString);
        AtomicInteger cancelledRan = new AtomicInteger();
        Outcome<String> cancelled = subscribe(
                requests,
                executor -> Mono.fromCallable(() -> {
                    cancelledRan.incrementAndGet();
                    return "gone";
                }));
        Outcome<String> next = subscribe(requests, executor -> Mono.just("next one"));
        cancelled.subscription().cancel();
        assertThat(stats.queued()).isEqualTo(1);
        assertThat(stats.cancelled()).isEqualTo(1);
        release.countDown();
        assertThat(admitted.next()).isEqualTo("next first");
        assertThat(next.next()).isEqualTo("next next one");
        eventually(WAIT, () -> stats.inFlight() == 0 && stats.queued() == 0, stats::toString);
        assertThat(cancelledRan).hasValue(0);
        assertThat(cancelled.signals).isEmpty();
        assertThat(stats.coroutinesStarted()).isEqualTo(2);
    }

    /**
     * Requests end and arrive on both loops and a test thread at once, with a queue timeout short enough that some
     * wait it out: every request is answered exactly once, and at the end no slot is held and nobody waits.
     */
    @RepeatedTest(5)
    void racingEndsAndArrivalsLoseNoSlotAndNoWaiter() throws Exception {
        CoroutineRequests requests = requests(AdmissionControl.fixed(4).withQueue(16, Duration.ofMillis(5)));
        int n = 400;
        List<Outcome<String>> outcomes = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            String answer = "r" + i;
            outcomes.add(subscribe(
                    requests,
                    executor -> Mono.fromCallable(() -> {
                        Thread.onSpinWait();
                        return answer;
                    })));
        }
        int served = 0;
        int shed = 0;
        for (Outcome<String> o : outcomes) {
            String first = o.next();
            if (first.startsWith("next ")) {
                assertThat(o.next()).isEqualTo("complete");
                served++;
            } else {
                assertThat(first).startsWith("error CoroutineRejectedException");
                shed++;
            }
        }
        assertThat(served + shed).isEqualTo(n);
        assertThat(stats.shed()).isEqualTo(shed);
        assertThat(stats.coroutinesStarted()).isEqualTo(served);
        eventually(WAIT, () -> stats.inFlight() == 0 && stats.queued() == 0, stats::toString);
        // nothing stuck: the next request is admitted at once
        Outcome<String> after = subscribe(requests, executor -> Mono.just("after"));
        assertThat(after.next()).isEqualTo("next after");
    }

    @Test
    void badSettingsNameTheirRule() {
        assertThatThrownBy(() -> AdmissionControl.fixed(1).withQueue(-1, Duration.ofMillis(1)))
                .hasMessage("queue-size: -1 (expected: >= 0)");
        assertThatThrownBy(() -> AdmissionControl.fixed(1).withStatus(HttpStatus.BAD_GATEWAY))
                .hasMessage("status: 502 (expected: 503 or 429)");
        assertThatThrownBy(() -> AdmissionControl.adaptive(0, 10, 2)).hasMessage("min-limit: 0 (expected: > 0)");
        assertThatThrownBy(() -> AdmissionControl.adaptive(20, 10, 2))
                .hasMessage("max-limit: 10 (expected: >= the min-limit, 20)");
        assertThatThrownBy(() -> AdmissionControl.adaptive(1, 10, 1.0))
                .hasMessage("tolerance: 1.0 (expected: > 1 and <= 100)");
    }
}
