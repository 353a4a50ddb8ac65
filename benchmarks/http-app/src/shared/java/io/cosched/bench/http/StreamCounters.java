package io.cosched.bench.http;

import org.springframework.stereotype.Component;

import java.io.IOException;
import java.io.InputStream;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

/**
 * What the streaming endpoints of every stack share (benchmarks/stream.sh): the event's payload, the producer's
 * pause, the upload's read loop, and the count of events produced so far. The count is what tells a producer that
 * parks on a slow client from one that queues: over a window, a parked producer makes as many events as the
 * clients read.
 */
@Component
public class StreamCounters {

    /** The data of every event: 100 bytes, the same in every variant. */
    public static final String DATA = "0123456789".repeat(10);

    /** The upload handlers' read buffer. */
    private static final int READ_BUFFER = 64 * 1024;

    private final LongAdder produced = new LongAdder();
    private final AtomicInteger producers = new AtomicInteger();

    /** The producer's pause between two events at {@code hz} events per second: 1000/hz ms, none above 1,000. */
    public static Duration pause(int hz) {
        if (hz <= 0) {
            throw new IllegalArgumentException("hz: " + hz + " (expected: > 0)");
        }
        return Duration.ofMillis(1000 / hz);
    }

    /** Reads {@code body} to its end into one buffer and answers how many bytes it had. */
    public static long count(InputStream body) throws IOException {
        byte[] buffer = new byte[READ_BUFFER];
        long n = 0;
        int r;
        while ((r = body.read(buffer)) != -1) {
            n += r;
        }
        return n;
    }

    public void producerStarted() {
        producers.incrementAndGet();
    }

    public void producerEnded() {
        producers.decrementAndGet();
    }

    /** One event handed to the stack: it returned from the send, or went downstream of the delay. */
    public void produced() {
        produced.increment();
    }

    /** {@code "<events produced so far> <producers running>"}, what {@code GET /stream-stats} answers. */
    public String stats() {
        return produced.sum() + " " + producers.get();
    }
}
