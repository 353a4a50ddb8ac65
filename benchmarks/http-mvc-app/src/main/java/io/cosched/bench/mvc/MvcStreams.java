package io.cosched.bench.mvc;

import io.cosched.bench.http.StreamCounters;
import java.io.IOException;
import java.io.InputStream;
import java.time.Duration;
import org.springframework.http.MediaType;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.servlet.mvc.method.annotation.SseEmitter;

/**
 * The streaming endpoints as Spring MVC writes them on Tomcat with virtual threads (benchmarks/stream.sh): the
 * upload read from the servlet's {@code InputStream}, the events sent to an {@code SseEmitter} by a virtual thread
 * of their own.
 */
@RestController
public class MvcStreams {

    private final StreamCounters counters;

    public MvcStreams(StreamCounters counters) {
        this.counters = counters;
    }

    /** Reads the whole body and answers its size; the request's virtual thread blocks on each read. */
    @PostMapping("/upload")
    public String upload(InputStream body) throws IOException {
        return Long.toString(StreamCounters.count(body));
    }

    /**
     * Events with ids 1, 2, 3 ..., at most {@code hz} a second, sent by a virtual thread that sleeps between two.
     * The emitter has no timeout (0), as a stream that lasts as long as its client needs.
     *
     * <p>With a slow client (measured by benchmarks/stream.sh, sse-slow): a send made before Spring has started the
     * async response is queued in the emitter (the first few at most); after, each send writes and flushes through
     * Tomcat's blocking output under the emitter's lock, so the producer blocks (its virtual thread parks) once the
     * socket's buffers are full, and nothing queues in the heap: over the window the producers made no event while
     * the clients took a thousand a second from what the kernel held, and the live heap stayed flat. A write
     * blocked for longer than Tomcat's connection timeout (60 s as Spring Boot leaves it) fails: the send throws
     * and the connection closes, although the client still reads, which is why the benchmark raises the timeout.
     */
    @GetMapping(path = "/sse", produces = MediaType.TEXT_EVENT_STREAM_VALUE)
    public SseEmitter sse(@RequestParam(defaultValue = "1000") int hz) {
        Duration pause = StreamCounters.pause(hz);
        SseEmitter emitter = new SseEmitter(0L);
        Thread.ofVirtual().name("sse-producer").start(() -> {
            counters.producerStarted();
            try {
                for (long id = 1; ; id++) {
                    emitter.send(SseEmitter.event().id(Long.toString(id)).data(StreamCounters.DATA));
                    counters.produced();
                    if (!pause.isZero()) {
                        Thread.sleep(pause);
                    }
                }
            } catch (IOException | IllegalStateException e) {
                // the client went away (the container completes the emitter), or the emitter was completed:
                // the producer ends, as the others do when their send throws
            } catch (InterruptedException e) {
                emitter.complete();
            } finally {
                counters.producerEnded();
            }
        });
        return emitter;
    }

    @GetMapping("/stream-stats")
    public String streamStats() {
        return counters.stats();
    }
}
