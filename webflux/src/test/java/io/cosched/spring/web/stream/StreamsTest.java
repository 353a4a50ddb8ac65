package io.cosched.spring.web.stream;

import static io.cosched.TestSupport.eventually;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cosched.Coroutine;
import io.cosched.IOManager;
import io.cosched.spring.web.StreamClosedException;
import io.cosched.spring.web.StreamClosedException.Reason;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;

/**
 * The two halves of streaming without a server: {@link PullSubscriber} (a body read by blocking code) asks its
 * publisher only for what is taken and fails as the request says; {@link ResponseStream} (a response fed by
 * blocking code) sends only what its subscriber asked for, and ends the right way for a cancel, a timeout before
 * the first signal, an idle client and a limit. Readers and producers run as coroutines of an IOManager.
 */
@Timeout(30)
class StreamsTest {

    private static final Duration WAIT = Duration.ofSeconds(10);

    private final IOManager io = IOManager.builder().name("streams").threads(1).build();

    {
        io.start();
    }

    @AfterEach
    void stop() {
        io.stop(Duration.ofSeconds(10));
    }

    // ---- PullSubscriber

    @Test
    void aReaderAsksForThePrefetchThenOnlyForWhatItTook() throws Exception {
        Source source = new Source();
        FakeRequest request = new FakeRequest(0);
        PullSubscriber<String> reader = new PullSubscriber<>(source, request, 4, s -> {}, "reading");
        Coroutine<List<String>> taken = io.spawn(() -> List.of(reader.next(), reader.next(), reader.next()));
        eventually(WAIT, () -> source.requested.get() == 4, () -> "requested " + source.requested);
        assertThat(request.begun).as("the first read began the stream").isTrue();
        source.emit("a");
        source.emit("b");
        source.emit("c");
        assertThat(taken.join()).containsExactly("a", "b", "c");
        // three taken of a prefetch of four: three more asked for, no more
        assertThat(source.requested.get()).isEqualTo(7);
    }

    @Test
    void aReaderGetsTheEndAndTheFailureAfterWhatCameBefore() throws Exception {
        Source source = new Source();
        PullSubscriber<String> reader = new PullSubscriber<>(source, new FakeRequest(0), 4, s -> {}, "reading");
        Coroutine<String> first = io.spawn(reader::next);
        eventually(WAIT, () -> source.subscriber != null, () -> "not subscribed");
        source.emit("a");
        source.subscriber.onError(new IllegalStateException("bad part"));
        assertThat(first.join()).isEqualTo("a");
        Coroutine<String> second = io.spawn(reader::next);
        assertThatThrownBy(second::join)
                .cause()
                .isInstanceOf(BodyReadException.class)
                .hasMessageContaining("reading failed")
                .cause()
                .isInstanceOf(IllegalStateException.class);
    }

    @Test
    void whatArrivesAfterTheReaderClosedIsDiscarded() throws Exception {
        Source source = new Source();
        List<String> discarded = new CopyOnWriteArrayList<>();
        PullSubscriber<String> reader = new PullSubscriber<>(source, new FakeRequest(0), 4, discarded::add, "reading");
        Coroutine<String> first = io.spawn(reader::next);
        eventually(WAIT, () -> source.subscriber != null, () -> "not subscribed");
        source.emit("a");
        assertThat(first.join()).isEqualTo("a");
        source.emit("b"); // queued: nobody reads
        io.spawn(() -> {
                    reader.close();
                    return null;
                })
                .join();
        assertThat(source.cancelled).isTrue();
        source.emit("late");
        assertThat(discarded).containsExactly("b", "late");
    }

    @Test
    void aReaderWaitsForTheClientNoLongerThanTheIdleLimit() throws Exception {
        Source source = new Source();
        PullSubscriber<String> reader = new PullSubscriber<>(
                source, new FakeRequest(TimeUnit.MILLISECONDS.toNanos(200)), 4, s -> {}, "reading");
        Coroutine<String> waiting = io.spawn(reader::next);
        assertThatThrownBy(waiting::join)
                .cause()
                .isInstanceOf(StreamClosedException.class)
                .satisfies(e -> assertThat(((StreamClosedException) e).reason()).isEqualTo(Reason.IDLE_TIMEOUT));
        assertThat(source.cancelled).as("the body is let go").isTrue();
    }

    @Test
    void anInterruptedReaderSaysWhyTheRequestIsEndingOrKeepsAnInterruptOfUnknownCause() throws Exception {
        Source source = new Source();
        FakeRequest request = new FakeRequest(0);
        PullSubscriber<String> reader = new PullSubscriber<>(source, request, 4, s -> {}, "reading");
        Coroutine<String> waiting = io.spawn(reader::next);
        eventually(WAIT, () -> source.subscriber != null, () -> "not subscribed");
        request.endedBy = Reason.CLIENT_GONE;
        waiting.interrupt();
        assertThatThrownBy(waiting::join)
                .cause()
                .isInstanceOf(StreamClosedException.class)
                .hasMessageContaining("the client went away");

        PullSubscriber<String> other = new PullSubscriber<>(new Source(), new FakeRequest(0), 4, s -> {}, "reading");
        AtomicBoolean flagKept = new AtomicBoolean();
        Coroutine<Void> interrupted = io.spawn(() -> {
            Thread.currentThread().interrupt();
            try {
                other.next();
            } catch (InterruptedIOException e) {
                flagKept.set(Thread.currentThread().isInterrupted());
            }
            return null;
        });
        interrupted.join();
        assertThat(flagKept)
                .as("an interrupt of unknown cause stays set for the caller")
                .isTrue();
    }

    // ---- ResponseStream

    @Test
    void aProducerSendsOnlyWhatTheSubscriberAskedFor() throws Exception {
        FakeRequest request = new FakeRequest(0);
        AtomicInteger sent = new AtomicInteger();
        ResponseStream<Integer> stream = new ResponseStream<>(
                "body",
                request,
                s -> {
                    for (int i = 0; i < 10; i++) {
                        s.send(i);
                        sent.incrementAndGet();
                    }
                },
                e -> {},
                null,
                null,
                () -> false);
        Sink sink = new Sink();
        Coroutine<?> producer = io.spawn(stream::produce);
        stream.subscribe(sink);
        sink.subscription.request(3);
        eventually(WAIT, () -> sent.get() == 3, () -> "sent " + sent);
        assertThat(List.of(sink.next(), sink.next(), sink.next())).containsExactly("next 0", "next 1", "next 2");
        assertThat(sink.signals).as("the fourth waits for demand").isEmpty();
        sink.subscription.request(Long.MAX_VALUE);
        producer.join();
        assertThat(sink.signals).contains("complete");
        assertThat(sent.get()).isEqualTo(10);
        assertThat(request.begun).isTrue();
    }

    @Test
    void aCancelFailsTheNextSendAndTellsTheRequest() throws Exception {
        FakeRequest request = new FakeRequest(0);
        BlockingQueue<Throwable> ended = new LinkedBlockingQueue<>();
        ResponseStream<String> stream = new ResponseStream<>(
                "body",
                request,
                s -> {
                    try {
                        while (true) {
                            s.send("x");
                        }
                    } catch (IOException e) {
                        ended.add(e);
                        throw e;
                    }
                },
                e -> {},
                null,
                null,
                () -> false);
        Sink sink = new Sink();
        io.spawn(stream::produce);
        stream.subscribe(sink);
        sink.subscription.request(2);
        assertThat(sink.next()).isEqualTo("next x");
        sink.subscription.cancel();
        Throwable e = ended.poll(10, TimeUnit.SECONDS);
        assertThat(e).isInstanceOf(StreamClosedException.class);
        assertThat(((StreamClosedException) e).reason()).isEqualTo(Reason.CLIENT_GONE);
        assertThat(request.cancelled).isTrue();
        eventually(WAIT, () -> io.stats().coroutines() == 0, () -> io.stats().toString());
        assertThat(sink.signals)
                .as("nothing after a cancel")
                .doesNotContain("complete")
                .noneMatch(s -> s.startsWith("error"));
    }

    @Test
    void aTimeoutBeforeTheFirstSignalFailsTheSubscriberAndStopsTheProducer() throws Exception {
        FakeRequest request = new FakeRequest(0);
        request.expired = true; // the deadline won the race to begin the stream
        BlockingQueue<Throwable> ended = new LinkedBlockingQueue<>();
        ResponseStream<String> stream = new ResponseStream<>(
                "body",
                request,
                s -> {
                    try {
                        s.send("too late");
                    } catch (IOException e) {
                        ended.add(e);
                        throw e;
                    }
                },
                e -> {},
                null,
                null,
                () -> false);
        stream.fail(new IllegalStateException("timed out")); // before Spring subscribed: kept for it
        Sink sink = new Sink();
        io.spawn(stream::produce);
        stream.subscribe(sink);
        assertThat(sink.next()).isEqualTo("error timed out");
        sink.subscription.request(1);
        Throwable e = ended.poll(10, TimeUnit.SECONDS);
        assertThat(e).isInstanceOf(StreamClosedException.class).hasMessageContaining("cosched.web.request-timeout");
        eventually(WAIT, () -> io.stats().coroutines() == 0, () -> io.stats().toString());
        assertThat(sink.signals).as("one terminal signal only").isEmpty();
    }

    @Test
    void aClientThatTakesNothingForTheIdleLimitEndsTheStreamAndACutIsNotAnError() throws Exception {
        FakeRequest request = new FakeRequest(TimeUnit.MILLISECONDS.toNanos(200));
        AtomicBoolean aborted = new AtomicBoolean();
        ResponseStream<String> stream = new ResponseStream<>(
                "body",
                request,
                s -> {
                    s.send("first");
                    s.send("second"); // never asked for
                },
                e -> {},
                () -> aborted.set(true),
                null,
                () -> false);
        Sink sink = new Sink();
        Coroutine<?> producer = io.spawn(stream::produce);
        stream.subscribe(sink);
        sink.subscription.request(1);
        assertThat(sink.next()).isEqualTo("next first");
        assertThat(sink.next())
                .as("the connection closes, without an error to log")
                .isEqualTo("complete");
        assertThat(aborted).isTrue();
        producer.join();
    }

    @Test
    void aClientThatReadsSlowlyButSteadilyIsNotIdle() throws Exception {
        // the socket empties a little every 50 ms, while no demand comes for longer than the 200 ms limit
        AtomicLong pending = new AtomicLong(1_000_000);
        ResponseStream<String> stream = new ResponseStream<>(
                "body",
                new FakeRequest(TimeUnit.MILLISECONDS.toNanos(200)),
                s -> {
                    s.send("first");
                    s.send("second");
                },
                e -> {},
                null,
                () -> pending.addAndGet(-1000),
                () -> false);
        Sink sink = new Sink();
        Coroutine<?> producer = io.spawn(stream::produce);
        stream.subscribe(sink);
        sink.subscription.request(1);
        assertThat(sink.next()).isEqualTo("next first");
        long started = System.nanoTime();
        while (System.nanoTime() - started < TimeUnit.MILLISECONDS.toNanos(600)) { // three limits' worth
            assertThat(producer.toFuture()).as("the producer waits on").isNotDone();
            java.util.concurrent.locks.LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(50));
        }
        sink.subscription.request(1);
        assertThat(sink.next()).isEqualTo("next second");
        assertThat(sink.next()).isEqualTo("complete");
        producer.join();
    }

    @Test
    void nobodySubscribingEndsAProducerWaitingForItsFirstDemand() throws Exception {
        ResponseStream<String> stream =
                new ResponseStream<>("body", new FakeRequest(0), s -> s.send("x"), e -> {}, null, null, () -> false);
        Coroutine<?> producer = io.spawn(stream::produce);
        stream.abandon(); // whether the producer waits already or not yet
        producer.join();
        assertThat(producer.toFuture()).isDone();
    }

    @Test
    void anEventStreamToldOfTheShutdownEndsCleanlyHoweverTheProducerLetsItOut() throws Exception {
        FakeRequest request = new FakeRequest(0);
        BlockingQueue<Throwable> ended = new LinkedBlockingQueue<>();
        OpenStreams open = new OpenStreams(timers);
        ResponseStream<String> stream = new ResponseStream<>(
                "body",
                request,
                s -> {
                    try {
                        while (true) {
                            s.send("tick");
                        }
                    } catch (IOException e) {
                        ended.add(e);
                        throw new IllegalStateException("wrapped by the application", e);
                    }
                },
                e -> {},
                null,
                null,
                () -> true);
        open.add(stream);
        Sink sink = new Sink();
        Coroutine<?> producer = io.spawn(stream::produce);
        stream.subscribe(sink);
        sink.subscription.request(1);
        assertThat(sink.next()).isEqualTo("next tick");
        open.endAll(Duration.ofMinutes(1)); // the producer waits for demand meanwhile

        assertThat(ended.poll(10, TimeUnit.SECONDS))
                .isInstanceOf(StreamClosedException.class)
                .hasMessageContaining("the server is shutting down (cosched.web.stream.shutdown-grace)")
                .satisfies(e -> assertThat(((StreamClosedException) e).reason()).isEqualTo(Reason.SHUTDOWN));
        assertThat(sink.next()).as("a clean end, not an error").isEqualTo("complete");
        producer.join();
        open.remove(stream);
        assertThat(open.size()).isZero();
    }

    @Test
    void aShutdownBeforeSpringSubscribedTellsAnEventStreamWhenItsTypeIsKnown() throws Exception {
        FakeRequest request = new FakeRequest(0);
        OpenStreams open = new OpenStreams(timers);
        open.endAll(Duration.ofMinutes(1));
        ResponseStream<String> stream =
                new ResponseStream<>("body", request, s -> s.send("x"), e -> {}, null, null, () -> true);
        open.add(stream); // opened after the shutdown began
        assertThat(request.endedBy).as("not yet known to be an event stream").isNull();
        Sink sink = new Sink();
        Coroutine<?> producer = io.spawn(stream::produce);
        stream.subscribe(sink);
        assertThat(request.endedBy).isEqualTo(Reason.SHUTDOWN);
        sink.subscription.request(1);
        assertThat(sink.next()).isEqualTo("complete");
        producer.join();
    }

    @Test
    void anotherStreamGoesOnThroughTheGraceAndIsThenCutNotCompleted() throws Exception {
        FakeRequest request = new FakeRequest(0);
        AtomicBoolean aborted = new AtomicBoolean();
        OpenStreams open = new OpenStreams(timers);
        CountDownLatch mayEnd = new CountDownLatch(1);
        ResponseStream<String> stream = new ResponseStream<>(
                "body",
                request,
                s -> {
                    s.send("line 1");
                    s.send("line 2");
                    mayEnd.await(); // stuck, as a producer waiting on a slow query
                },
                e -> {},
                () -> aborted.set(true),
                null,
                () -> false);
        open.add(stream);
        Sink sink = new Sink();
        Coroutine<?> producer = io.spawn(stream::produce);
        stream.subscribe(sink);
        sink.subscription.request(Long.MAX_VALUE);
        assertThat(List.of(sink.next(), sink.next())).containsExactly("next line 1", "next line 2");
        open.endAll(Duration.ofMillis(200));
        assertThat(request.endedBy).as("JSON lines are not told at once").isNull();
        assertThat(aborted).isFalse();

        eventually(WAIT, aborted::get, () -> "not cut");
        assertThat(request.endedBy).isEqualTo(Reason.SHUTDOWN);
        assertThat(sink.signals).as("nothing says the body is whole").doesNotContain("complete");
        mayEnd.countDown();
        producer.join();
    }

    // ---- test doubles

    /** A request with no timeout that has begun or not as told. */
    private final io.cosched.TimerManager timers = io.timers();

    private final class FakeRequest implements StreamRequest {
        private final long idleNanos;
        volatile boolean expired;
        volatile boolean begun;
        volatile boolean cancelled;
        volatile @Nullable Reason endedBy;

        FakeRequest(long idleNanos) {
            this.idleNanos = idleNanos;
        }

        @Override
        public boolean beginStream() {
            if (expired) {
                endedBy = Reason.REQUEST_TIMEOUT;
                return false;
            }
            begun = true;
            return true;
        }

        @Override
        public @Nullable Reason endedBy() {
            return endedBy;
        }

        @Override
        public StreamLimits limits() {
            Duration limit = idleNanos == 0 ? null : Duration.ofNanos(idleNanos);
            return new StreamLimits(limit, limit, null);
        }

        @Override
        public void streamCancelled() {
            cancelled = true;
            endedBy = Reason.CLIENT_GONE;
        }

        @Override
        public void shuttingDown() {
            if (endedBy == null) {
                endedBy = Reason.SHUTDOWN;
            }
        }

        @Override
        public void closeAtEnd(PullSubscriber<?> reader) {}

        @Override
        public io.cosched.TimerManager timers() {
            return timers;
        }
    }

    /** A publisher that emits when told and counts what was asked of it. */
    private static final class Source implements Publisher<String>, Subscription {
        final AtomicLong requested = new AtomicLong();
        volatile @Nullable Subscriber<? super String> subscriber;
        volatile boolean cancelled;

        @Override
        public void subscribe(Subscriber<? super String> s) {
            subscriber = s;
            s.onSubscribe(this);
        }

        void emit(String s) {
            subscriber.onNext(s);
        }

        @Override
        public void request(long n) {
            requested.addAndGet(n);
        }

        @Override
        public void cancel() {
            cancelled = true;
        }
    }

    /** A subscriber that records its signals. */
    private static final class Sink implements Subscriber<Object> {
        final BlockingQueue<String> signals = new LinkedBlockingQueue<>();
        volatile Subscription subscription;

        @Override
        public void onSubscribe(Subscription s) {
            subscription = s;
        }

        @Override
        public void onNext(Object o) {
            signals.add("next " + o);
        }

        @Override
        public void onError(Throwable t) {
            signals.add("error " + t.getMessage());
        }

        @Override
        public void onComplete() {
            signals.add("complete");
        }

        String next() throws InterruptedException {
            String s = signals.poll(10, TimeUnit.SECONDS);
            assertThat(s).as("a signal within 10 s").isNotNull();
            return s;
        }
    }
}
