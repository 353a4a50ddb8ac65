package io.cosched.bench.http;

import io.cosched.Coroutines;
import io.cosched.spring.web.EventStream;
import io.cosched.spring.web.MultipartStream;
import io.cosched.spring.web.RunAsCoroutine;
import java.io.IOException;
import java.io.InputStream;
import java.time.Duration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnExpression;
import org.springframework.http.MediaType;
import org.springframework.http.codec.ServerSentEvent;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/**
 * The streaming endpoints in blocking style on cosched (benchmarks/stream.sh): the upload read through an
 * {@code InputStream} argument, the events sent by an {@code EventStream} whose producer parks in {@code send}
 * while its client takes nothing.
 */
@RestController
@ConditionalOnExpression("'${bench.variant}'.equalsIgnoreCase('cosched')")
public class CoroutineStreams {

    private final StreamCounters counters;

    public CoroutineStreams(StreamCounters counters) {
        this.counters = counters;
    }

    /** Reads the whole body as it arrives and answers its size. */
    @RunAsCoroutine
    @PostMapping("/upload")
    public String upload(InputStream body) throws IOException {
        return Long.toString(StreamCounters.count(body));
    }

    /** The bytes of the body's file parts, read through a {@link MultipartStream} as they arrive. */
    @PostMapping("/upload-parts")
    public String uploadParts(MultipartStream parts) throws IOException {
        long n = 0;
        MultipartStream.Part part;
        while ((part = parts.next()) != null) {
            try (InputStream in = part.inputStream()) {
                n += StreamCounters.count(in);
            }
        }
        return Long.toString(n);
    }

    /** Events with ids 1, 2, 3 ..., at most {@code hz} a second; ends when the client goes (send throws). */
    @GetMapping(path = "/sse", produces = MediaType.TEXT_EVENT_STREAM_VALUE)
    public EventStream<ServerSentEvent<String>> sse(@RequestParam(defaultValue = "1000") int hz) {
        Duration pause = StreamCounters.pause(hz);
        return events -> {
            counters.producerStarted();
            try {
                for (long id = 1; ; id++) {
                    events.send(ServerSentEvent.builder(StreamCounters.DATA)
                            .id(Long.toString(id))
                            .build());
                    counters.produced();
                    if (!pause.isZero()) {
                        Coroutines.sleep(pause);
                    }
                }
            } finally {
                counters.producerEnded();
            }
        };
    }

    /** A plain handler (runs on the loop, no coroutine): reading it does not disturb what it counts. */
    @GetMapping("/stream-stats")
    public String streamStats() {
        return counters.stats();
    }
}
