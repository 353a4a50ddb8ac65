package io.cosched.spring.boot.autoconfigure.web;

import io.cosched.Coroutines;
import io.cosched.spring.web.EventStream;
import io.cosched.spring.web.MultipartStream;
import io.cosched.spring.web.RunAsCoroutine;
import io.cosched.spring.web.StreamClosedException;
import io.cosched.spring.web.StreamingResponseBody;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.http.codec.ServerSentEvent;
import org.springframework.http.codec.multipart.FilePart;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RequestPart;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Mono;

/** Handlers that read their request body and write their response as streams, for the streaming tests. */
@RestController
@RequestMapping("/s")
class StreamingHandlers {

    /** What the streaming handlers did; reset by each test. */
    static final class Probe {
        static final AtomicLong read = new AtomicLong();
        static final AtomicLong sent = new AtomicLong();
        static volatile CountDownLatch go = new CountDownLatch(0);
        static volatile CountDownLatch paused = new CountDownLatch(1);
        static volatile CountDownLatch ended = new CountDownLatch(1);
        static volatile long endedAtNanos;
        static final AtomicReference<Throwable> endedWith = new AtomicReference<>();
        static volatile String thread;
        static final AtomicInteger streaming = new AtomicInteger(); // producers past their first send
        static final java.util.Queue<Throwable> endings = new java.util.concurrent.ConcurrentLinkedQueue<>();

        static void reset() {
            streaming.set(0);
            endings.clear();
            read.set(0);
            sent.set(0);
            go = new CountDownLatch(0);
            paused = new CountDownLatch(1);
            ended = new CountDownLatch(1);
            endedAtNanos = 0;
            endedWith.set(null);
            thread = null;
        }

        static void end(Throwable t) {
            endedWith.set(t);
            endedAtNanos = System.nanoTime();
            ended.countDown();
        }
    }

    /** Counts the body's bytes as it reads them; after {@code pauseAfter} bytes waits for {@link Probe#go}. */
    @RunAsCoroutine
    @PostMapping("/count")
    String count(InputStream body, @RequestParam(defaultValue = "-1") long pauseAfter) throws Exception {
        Probe.thread = Thread.currentThread().toString();
        byte[] buffer = new byte[16384];
        long n = 0;
        int r;
        boolean paused = false;
        while ((r = body.read(buffer)) != -1) {
            n += r;
            Probe.read.set(n);
            if (!paused && pauseAfter >= 0 && n >= pauseAfter) {
                paused = true;
                Probe.paused.countDown();
                Probe.go.await(60, TimeUnit.SECONDS);
            }
        }
        return n + " " + Thread.currentThread();
    }

    /** Not marked: taking its body as a stream makes it a coroutine handler all the same. */
    @PostMapping("/count-body")
    String countBody(@RequestBody InputStream body) throws IOException {
        return body.transferTo(OutputStreams.NULL) + " " + Thread.currentThread();
    }

    /** Each part as name:filename:bytes, form fields as name=value; a coroutine handler for its MultipartStream. */
    @PostMapping("/parts")
    String parts(MultipartStream parts) throws IOException {
        List<String> seen = new ArrayList<>();
        MultipartStream.Part part;
        while ((part = parts.next()) != null) {
            if (part.filename() == null && !"skip".equals(part.name())) {
                seen.add(part.name() + "=" + part.value());
            } else if (!"skip".equals(part.name())) {
                try (InputStream in = part.inputStream()) {
                    seen.add(part.name() + ":" + part.filename() + ":" + in.transferTo(OutputStreams.NULL));
                }
            }
        }
        return String.join(",", seen);
    }

    /** Reads 100 bytes of the body and returns, the stream not closed: the rest is left to the server. */
    @PostMapping("/first-body-bytes")
    String firstBodyBytes(InputStream body) throws IOException {
        return Integer.toString(body.readNBytes(100).length);
    }

    /** Reads 100 bytes of the first part and returns: the rest of the body is left to the server. */
    @PostMapping("/first-bytes")
    String firstBytes(MultipartStream parts) throws IOException {
        MultipartStream.Part part = parts.next();
        return part == null ? "none" : part.name() + ":" + part.inputStream().readNBytes(100).length;
    }

    /** Spring's own multipart reader, whose parts go to memory or disk before the handler runs. */
    @RunAsCoroutine
    @PostMapping("/part-file")
    String partFile(@RequestPart("file") FilePart file) {
        return file.filename() + ":"
                + DataBufferUtils.join(file.content())
                        .map(b -> {
                            int n = b.readableByteCount();
                            DataBufferUtils.release(b);
                            return n;
                        })
                        .block();
    }

    /** {@code n} bytes of 'x' in writes of {@code write} bytes. */
    @GetMapping(path = "/bytes", produces = "text/csv")
    StreamingResponseBody bytes(@RequestParam int n, @RequestParam(defaultValue = "1000") int write) {
        Probe.thread = Thread.currentThread().toString();
        return out -> {
            byte[] chunk = "x".repeat(write).getBytes(StandardCharsets.US_ASCII);
            for (int left = n; left > 0; left -= write) {
                out.write(chunk, 0, Math.min(write, left));
                Probe.sent.addAndGet(Math.min(write, left));
            }
            Probe.thread = Thread.currentThread().toString();
        };
    }

    @GetMapping("/download")
    ResponseEntity<StreamingResponseBody> download() {
        return ResponseEntity.status(HttpStatus.CREATED)
                .header(HttpHeaders.CONTENT_DISPOSITION, "attachment; filename=\"report.txt\"")
                .contentType(MediaType.TEXT_PLAIN)
                .body(out -> out.write(("report by " + Thread.currentThread()).getBytes(StandardCharsets.UTF_8)));
    }

    /** {@code n} events with ids and names, a comment first; each says where it was made. */
    @GetMapping(path = "/sse", produces = MediaType.TEXT_EVENT_STREAM_VALUE)
    EventStream<ServerSentEvent<String>> sse(@RequestParam int n, @RequestParam(defaultValue = "0") long everyMs) {
        return events -> {
            events.send(ServerSentEvent.<String>builder().comment("hello").build());
            for (int i = 1; i <= n; i++) {
                events.send(ServerSentEvent.builder("tick " + i + " " + Thread.currentThread())
                        .id(Integer.toString(i))
                        .event("tick")
                        .build());
                if (everyMs > 0) {
                    Coroutines.sleep(Duration.ofMillis(everyMs));
                }
            }
        };
    }

    /** {@code n} JSON lines; with no produces: the Accept header chooses. */
    @GetMapping("/elements")
    EventStream<Map<String, Object>> elements(@RequestParam int n) {
        return events -> {
            for (int i = 1; i <= n; i++) {
                events.send(Map.of("n", i, "thread", Thread.currentThread().toString()));
            }
        };
    }

    /** Sends as fast as the client takes; counts what went out and tells how it ended. */
    @GetMapping(path = "/endless", produces = MediaType.TEXT_EVENT_STREAM_VALUE)
    EventStream<String> endless() {
        return events -> {
            try {
                for (long i = 0; ; i++) {
                    events.send("event " + i + " " + "y".repeat(100));
                    Probe.sent.incrementAndGet();
                }
            } catch (Throwable t) {
                Probe.end(t);
                throw t;
            }
        };
    }

    /** An event every {@code everyMs}, for ever; tells how it ended. */
    @GetMapping(path = "/ticks", produces = MediaType.TEXT_EVENT_STREAM_VALUE)
    EventStream<String> ticks(@RequestParam long everyMs) {
        return events -> endless(events, "tick", everyMs);
    }

    /** A JSON line every {@code everyMs}, for ever; tells how it ended. */
    @GetMapping(path = "/lines", produces = MediaType.APPLICATION_NDJSON_VALUE)
    EventStream<Map<String, Object>> lines(@RequestParam long everyMs) {
        return events -> endless(events, Map.of("line", true), everyMs);
    }

    private static <T> void endless(EventStream.Emitter<T> events, T element, long everyMs) throws Exception {
        try {
            events.send(element);
            Probe.streaming.incrementAndGet();
            while (true) {
                Coroutines.sleep(Duration.ofMillis(everyMs));
                events.send(element);
            }
        } catch (Throwable t) {
            Probe.endings.add(t);
            throw t;
        }
    }

    /** Sleeps, then sends one event: the request timeout covers the wait for the first byte. */
    @GetMapping(path = "/first-late", produces = MediaType.TEXT_EVENT_STREAM_VALUE)
    EventStream<String> firstLate(@RequestParam long ms) {
        return events -> {
            try {
                Coroutines.sleep(Duration.ofMillis(ms));
                events.send("late");
            } catch (Throwable t) {
                Probe.end(t);
                throw t;
            }
        };
    }

    /** Sends one event, then waits for nothing in particular: an idle stream. */
    @GetMapping(path = "/quiet", produces = MediaType.TEXT_EVENT_STREAM_VALUE)
    EventStream<String> quiet() {
        return events -> {
            events.send("first");
            try {
                Coroutines.sleep(Duration.ofSeconds(60));
            } catch (Throwable t) {
                Probe.end(t);
                throw t;
            }
        };
    }

    /** Fails before it sends anything: an error status can still go out. */
    @GetMapping("/fail-first")
    StreamingResponseBody failFirst() {
        return out -> {
            throw new IllegalStateException("no report today");
        };
    }

    /** Reactive, and marked: its body runs in a coroutine, its Mono is subscribed as usual. */
    @RunAsCoroutine
    @GetMapping("/reactive-marked")
    Mono<String> reactiveMarked() throws InterruptedException {
        Coroutines.sleep(Duration.ofMillis(1)); // blocking is fine here
        return Mono.just(Thread.currentThread().toString());
    }

    /** Where nothing is written: {@code transferTo}'s sink. */
    private static final class OutputStreams {
        static final java.io.OutputStream NULL = java.io.OutputStream.nullOutputStream();
    }

    static boolean closedBecause(Throwable t, StreamClosedException.Reason reason) {
        for (Throwable c = t; c != null; c = c.getCause()) {
            if (c instanceof StreamClosedException s && s.reason() == reason) {
                return true;
            }
        }
        return false;
    }
}
