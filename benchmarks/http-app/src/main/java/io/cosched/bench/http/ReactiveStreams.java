package io.cosched.bench.http;

import java.time.Duration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnExpression;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.http.MediaType;
import org.springframework.http.codec.ServerSentEvent;
import org.springframework.http.codec.multipart.PartEvent;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The streaming endpoints as pure WebFlux writes them (benchmarks/stream.sh): the upload counted buffer by buffer
 * from a {@code Flux<DataBuffer>}, the events from a {@code Flux} that makes one only on demand.
 */
@RestController
@ConditionalOnExpression("'${bench.variant}'.equalsIgnoreCase('reactive')")
public class ReactiveStreams {

    private final StreamCounters counters;

    public ReactiveStreams(StreamCounters counters) {
        this.counters = counters;
    }

    /** Sums the buffers' sizes as they arrive, releasing each (they are pooled, and off the heap). */
    @PostMapping("/upload")
    public Mono<String> upload(@RequestBody Flux<DataBuffer> body) {
        return body.reduce(0L, (n, buffer) -> {
                    long sum = n + buffer.readableByteCount();
                    DataBufferUtils.release(buffer);
                    return sum;
                })
                .map(String::valueOf);
    }

    /** The bytes of the body's file parts, summed from Spring's streaming parser as they arrive, each released. */
    @PostMapping("/upload-parts")
    public Mono<String> uploadParts(@RequestBody Flux<PartEvent> events) {
        return events.reduce(0L, (n, event) -> {
                    DataBuffer content = event.content();
                    long sum = n + content.readableByteCount();
                    DataBufferUtils.release(content);
                    return sum;
                })
                .map(String::valueOf);
    }

    /**
     * Events with ids 1, 2, 3 ..., at most {@code hz} a second. {@code generate} makes an event only when one is
     * asked for and {@code delayElements} asks for the next only after its pause, so a client that takes nothing
     * stops the producer. {@code Flux.interval} would not: it ticks on regardless and fails with an overflow
     * error once the client falls behind.
     */
    @GetMapping(path = "/sse", produces = MediaType.TEXT_EVENT_STREAM_VALUE)
    public Flux<ServerSentEvent<String>> sse(@RequestParam(defaultValue = "1000") int hz) {
        Duration pause = StreamCounters.pause(hz);
        Flux<ServerSentEvent<String>> events = Flux.generate(() -> 1L, (id, sink) -> {
            sink.next(ServerSentEvent.builder(StreamCounters.DATA)
                    .id(Long.toString(id))
                    .build());
            return id + 1;
        });
        return (pause.isZero() ? events : events.delayElements(pause))
                .doOnNext(e -> counters.produced())
                .doOnSubscribe(s -> counters.producerStarted())
                .doFinally(s -> counters.producerEnded());
    }

    @GetMapping("/stream-stats")
    public Mono<String> streamStats() {
        return Mono.fromSupplier(counters::stats);
    }
}
