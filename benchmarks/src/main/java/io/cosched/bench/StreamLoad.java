package io.cosched.bench;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * The streaming benchmark's client (benchmarks/stream.sh), over plain sockets with a virtual thread per connection,
 * so that what a connection reads is exactly what its reading code asks for.
 *
 * <pre>
 * StreamLoad sse    --url=http://127.0.0.1:18080 [--path=/sse?hz=1000] [--connections=1000] [--read-every-ms=1000]
 *                   [--rcvbuf=16384] [--seconds=60] [--until-file=PATH] [--timeline=PATH]
 * StreamLoad upload --url=http://127.0.0.1:18080 [--path=/upload] [--mb=100] [--connections=1]
 *                   [--seconds=60] [--count=0 (uploads per connection; 0: until the time is up)] [--until-file=PATH]
 *                   [--timeline=PATH] [--multipart (the body as one multipart/form-data file part)]
 * </pre>
 *
 * <ul>
 *   <li><b>sse</b>: each connection sends one GET, then takes one event per {@code read-every-ms} (0: as fast as
 *       they come), on a schedule of its own (the connections' phases spread over the period), and checks that
 *       the ids go 1, 2, 3 ... without a gap. Its receive buffer is small ({@code rcvbuf}, set before connecting,
 *       so the TCP window follows it) and it reads through a 512-byte buffer, so the kernel's buffer drains no
 *       faster than the events are taken. A read that waits longer than half a second for its event is a stall:
 *       the server did not keep a client fed that had room.</li>
 *   <li><b>upload</b>: each connection POSTs bodies of {@code mb} MiB one after the other on one kept-alive
 *       connection, written from one 64 KiB buffer (the body is made as it is sent, never held), and checks that
 *       the answer is the body's size.</li>
 * </ul>
 * The run ends after {@code seconds}, or as soon as {@code until-file} exists (the script's window is over); an
 * upload under way then finishes. Every 100 ms the timeline gets a line {@code <epoch ms>,<events or bytes so far>}
 * (bytes: written to the socket), from which the script takes what its window saw. At the end one JSON line.
 */
public final class StreamLoad {

    private static final long STALL_NANOS = TimeUnit.MILLISECONDS.toNanos(500);
    private static final int UPLOAD_CHUNK = 64 * 1024;

    private final String mode;
    private final InetSocketAddress address;
    private final String hostHeader;
    private final String path;
    private final int connections;
    private final long deadlineNanos;
    private final Path untilFile;
    private final Path timeline;
    private final long startNanos = System.nanoTime();
    private volatile boolean stopping;

    /** Events (sse) or body bytes written (upload), so far: what the timeline records. */
    private final LongAdder units = new LongAdder();

    private final AtomicInteger connected = new AtomicInteger();
    private final AtomicInteger failed = new AtomicInteger();
    private final Map<String, AtomicInteger> failures = new ConcurrentHashMap<>();
    private final Set<Socket> open = ConcurrentHashMap.newKeySet();

    private final boolean multipart; // upload: the body as one multipart file part (--multipart)

    private StreamLoad(String mode, Map<String, String> o) {
        this.mode = mode;
        URI url = URI.create(o.getOrDefault("url", "http://127.0.0.1:18080"));
        int port = url.getPort() > 0 ? url.getPort() : 80;
        this.address = new InetSocketAddress(url.getHost(), port);
        this.hostHeader = url.getHost() + ":" + port;
        this.path = o.getOrDefault("path", mode.equals("upload") ? "/upload" : "/sse?hz=1000");
        this.connections = positive(o, "connections", mode.equals("upload") ? 1 : 1000);
        this.deadlineNanos = startNanos + (long) (Double.parseDouble(o.getOrDefault("seconds", "60")) * 1e9);
        this.untilFile = o.containsKey("until-file") ? Path.of(o.get("until-file")) : null;
        this.timeline = o.containsKey("timeline") ? Path.of(o.get("timeline")) : null;
        this.multipart = o.containsKey("multipart");
    }

    public static void main(String[] args) throws Exception {
        if (args.length == 0 || !List.of("sse", "upload", "shutdown").contains(args[0])) {
            throw new IllegalArgumentException(
                    "mode: " + (args.length == 0 ? "none" : args[0]) + " (expected: sse, upload or shutdown)");
        }
        Map<String, String> o = new TreeMap<>();
        for (String a : List.of(args).subList(1, args.length)) {
            if (!a.startsWith("--")) {
                throw new IllegalArgumentException("argument: '" + a + "' (expected: --name[=value])");
            }
            int eq = a.indexOf('=');
            o.put(eq < 0 ? a.substring(2) : a.substring(2, eq), eq < 0 ? "" : a.substring(eq + 1));
        }
        StreamLoad load = new StreamLoad(args[0], o);
        String result = switch (args[0]) {
            case "sse" -> load.sse(o);
            case "upload" -> load.upload(o);
            default -> load.shutdown(o);
        };
        System.out.println(result);
    }

    // ---- sse ----

    private final LongAdder skipped = new LongAdder();
    private final LongAdder outOfOrder = new LongAdder();
    private final LongAdder stalls = new LongAdder();
    private final AtomicLong maxWaitNanos = new AtomicLong();
    private final AtomicLong minEvents = new AtomicLong(Long.MAX_VALUE);
    private final AtomicLong maxEvents = new AtomicLong();

    private String sse(Map<String, String> o) throws Exception {
        long periodNanos = TimeUnit.MILLISECONDS.toNanos(Long.parseLong(o.getOrDefault("read-every-ms", "1000")));
        int rcvbuf = positive(o, "rcvbuf", 16 * 1024);
        // connections open 50 at a time: a thousand SYNs at once overflow a listen backlog, and the retries
        // would land in the warm-up's first seconds as noise
        Semaphore connecting = new Semaphore(50);
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < connections; i++) {
            long phase = periodNanos * i / connections;
            threads.add(Thread.ofVirtual()
                    .name("sse-" + i)
                    .start(() -> sseConnection(connecting, rcvbuf, periodNanos, phase)));
        }
        runTimeline(threads);
        return String.format(
                Locale.ROOT,
                "{\"mode\":\"sse\",\"connections\":%d,\"connected\":%d,\"failed\":%d,\"failures\":%s,\"events\":%d,"
                        + "\"skipped\":%d,\"outOfOrder\":%d,\"stalls\":%d,\"maxWaitMs\":%.1f,\"eventsPerConnection\":[%d,%d],"
                        + "\"seconds\":%.1f}",
                connections,
                connected.get(),
                failed.get(),
                failuresJson(),
                units.sum(),
                skipped.sum(),
                outOfOrder.sum(),
                stalls.sum(),
                maxWaitNanos.get() / 1e6,
                minEvents.get() == Long.MAX_VALUE ? 0 : minEvents.get(),
                maxEvents.get(),
                (System.nanoTime() - startNanos) / 1e9);
    }

    private void sseConnection(Semaphore connecting, int rcvbuf, long periodNanos, long phase) {
        long events = 0;
        try (Socket socket = new Socket()) {
            socket.setReceiveBufferSize(rcvbuf); // before connect: the window scale is chosen from it
            socket.setTcpNoDelay(true);
            HttpReader in = askForEvents(socket, connecting);
            open.add(socket);
            Head head = in.head();
            if (head.status != 200) {
                fail("status " + head.status);
                return;
            }
            Events stream = new Events(in.body(head));
            long last = 0;
            long due = System.nanoTime() + phase;
            while (!over()) {
                long now = System.nanoTime();
                if (due > now) {
                    sleepUntil(due);
                    if (over()) {
                        break;
                    }
                }
                long asked = System.nanoTime();
                long id = stream.next();
                long waited = System.nanoTime() - asked;
                if (id == -1) {
                    if (!over()) {
                        fail("closed by the server after " + events + " events");
                    }
                    return;
                }
                if (waited > STALL_NANOS && !over()) {
                    stalls.increment();
                }
                maxWaitNanos.accumulateAndGet(waited, Math::max);
                if (id > last + 1) {
                    skipped.add(id - last - 1);
                } else if (id <= last) {
                    outOfOrder.increment();
                }
                last = id;
                events++;
                units.increment();
                due = Math.max(due + periodNanos, asked); // a late read does not make the next ones come in a burst
            }
        } catch (IOException e) {
            if (!over()) {
                fail(e.getClass().getSimpleName() + ": " + e.getMessage());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            minEvents.accumulateAndGet(events, Math::min);
            maxEvents.accumulateAndGet(events, Math::max);
        }
    }

    /** Connects {@code socket} (at most as many at once as {@code connecting} lets) and sends the SSE request. */
    private HttpReader askForEvents(Socket socket, Semaphore connecting) throws IOException, InterruptedException {
        connecting.acquire();
        try {
            socket.connect(address, 10_000);
        } finally {
            connecting.release();
        }
        connected.incrementAndGet();
        OutputStream out = socket.getOutputStream();
        out.write(("GET " + path + " HTTP/1.1\r\nHost: " + hostHeader + "\r\nAccept: text/event-stream\r\n\r\n")
                .getBytes(StandardCharsets.US_ASCII));
        out.flush();
        return new HttpReader(socket.getInputStream(), 512);
    }

    // ---- shutdown ----

    /**
     * Opens the connections to an SSE endpoint, reads their events as they come, and once every one has had its
     * first event sends the server ({@code --pid}) SIGTERM; then waits for each stream to end and for the server to
     * exit. A stream ends cleanly when its body ends with the last chunk, else it was cut (the connection closed
     * mid-body, or reset).
     */
    private String shutdown(Map<String, String> o) throws Exception {
        ProcessHandle server = ProcessHandle.of(Long.parseLong(Objects.requireNonNull(o.get("pid"), "--pid")))
                .orElseThrow(() -> new IllegalArgumentException("--pid: no such process"));
        Semaphore connecting = new Semaphore(50);
        CountDownLatch streaming = new CountDownLatch(connections);
        AtomicLong signalled = new AtomicLong();
        LongAdder clean = new LongAdder();
        LongAdder cut = new LongAdder();
        List<Long> endsMs = java.util.Collections.synchronizedList(new ArrayList<>());
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < connections; i++) {
            threads.add(Thread.ofVirtual().name("sse-" + i).start(() -> {
                try (Socket socket = new Socket()) {
                    HttpReader in = askForEvents(socket, connecting);
                    Head head = in.head();
                    if (head.status != 200) {
                        fail("status " + head.status);
                        streaming.countDown();
                        return;
                    }
                    Body body = in.body(head);
                    Events events = new Events(body);
                    boolean first = true;
                    try {
                        while (events.next() != -1) {
                            units.increment();
                            if (first) {
                                first = false;
                                streaming.countDown();
                            }
                        }
                        (body.endedCleanly() ? clean : cut).increment();
                    } catch (IOException e) {
                        cut.increment();
                    }
                    long since = signalled.get();
                    if (since != 0) {
                        endsMs.add(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - since));
                    }
                } catch (IOException e) {
                    fail(e.getClass().getSimpleName() + ": " + e.getMessage());
                    streaming.countDown();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }));
        }
        boolean allStreaming = streaming.await(120, TimeUnit.SECONDS);
        long t0 = System.nanoTime();
        signalled.set(t0);
        server.destroy(); // SIGTERM
        for (Thread t : threads) {
            t.join(java.time.Duration.ofSeconds(120));
        }
        long streamsEnded = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
        boolean exited =
                server.onExit().completeOnTimeout(null, 120, TimeUnit.SECONDS).get() != null;
        long exitMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
        List<Long> ends = new ArrayList<>(endsMs);
        ends.sort(null);
        return String.format(
                Locale.ROOT,
                "{\"mode\":\"shutdown\",\"connections\":%d,\"connected\":%d,\"allStreaming\":%b,\"failed\":%d,"
                        + "\"failures\":%s,\"events\":%d,\"clean\":%d,\"cut\":%d,\"endP50Ms\":%d,\"endMaxMs\":%d,"
                        + "\"streamsEndedMs\":%d,\"exited\":%b,\"exitMs\":%d}",
                connections,
                connected.get(),
                allStreaming,
                failed.get(),
                failuresJson(),
                units.sum(),
                clean.sum(),
                cut.sum(),
                ends.isEmpty() ? -1 : ends.get(ends.size() / 2),
                ends.isEmpty() ? -1 : ends.get(ends.size() - 1),
                streamsEnded,
                exited,
                exitMs);
    }

    // ---- upload ----

    private static final String BOUNDARY = "cosched-bench-5f3a";
    private final LongAdder uploads = new LongAdder();
    private final LongAdder wrongSizes = new LongAdder();
    private final AtomicLong maxUploadNanos = new AtomicLong();
    private final AtomicLong minUploadNanos = new AtomicLong(Long.MAX_VALUE);

    private String upload(Map<String, String> o) throws Exception {
        long size = (long) (Double.parseDouble(o.getOrDefault("mb", "100")) * 1024 * 1024);
        int count = Integer.parseInt(o.getOrDefault("count", "0"));
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < connections; i++) {
            threads.add(Thread.ofVirtual().name("upload-" + i).start(() -> uploadConnection(size, count)));
        }
        runTimeline(threads);
        double seconds = (System.nanoTime() - startNanos) / 1e9;
        return String.format(
                Locale.ROOT,
                "{\"mode\":\"upload\",\"connections\":%d,\"bodyBytes\":%d,\"uploads\":%d,\"wrongSizes\":%d,\"failed\":%d,"
                        + "\"failures\":%s,\"bytes\":%d,\"mbPerSecond\":%.1f,\"uploadSeconds\":[%.2f,%.2f],\"seconds\":%.1f}",
                connections,
                size,
                uploads.sum(),
                wrongSizes.sum(),
                failed.get(),
                failuresJson(),
                units.sum(),
                units.sum() / 1048576.0 / seconds,
                minUploadNanos.get() == Long.MAX_VALUE ? 0 : minUploadNanos.get() / 1e9,
                maxUploadNanos.get() / 1e9,
                seconds);
    }

    private void uploadConnection(long size, int count) {
        byte[] chunk = new byte[UPLOAD_CHUNK];
        for (int i = 0; i < chunk.length; i++) {
            chunk[i] = (byte) ('a' + i % 26);
        }
        // with --multipart the body is one file part of `size` bytes: the part's headers before it, the closing
        // boundary after; the server answers the part's size as for a plain body
        byte[] partHead = multipart
                ? ("--" + BOUNDARY + "\r\nContent-Disposition: form-data; name=\"file\"; filename=\"data.csv\"\r\n"
                                + "Content-Type: text/csv\r\n\r\n")
                        .getBytes(StandardCharsets.US_ASCII)
                : new byte[0];
        byte[] partTail =
                multipart ? ("\r\n--" + BOUNDARY + "--\r\n").getBytes(StandardCharsets.US_ASCII) : new byte[0];
        byte[] request = ("POST " + path + " HTTP/1.1\r\nHost: " + hostHeader + "\r\nContent-Type: "
                        + (multipart ? "multipart/form-data; boundary=" + BOUNDARY : "application/octet-stream")
                        + "\r\nContent-Length: " + (size + partHead.length + partTail.length) + "\r\n\r\n")
                .getBytes(StandardCharsets.US_ASCII);
        int done = 0;
        Socket socket = null;
        HttpReader in = null;
        try {
            while ((count == 0 && !over()) || (count > 0 && done < count)) {
                if (socket == null) {
                    socket = new Socket();
                    socket.setTcpNoDelay(true);
                    socket.connect(address, 10_000);
                    open.add(socket);
                    connected.incrementAndGet();
                    in = new HttpReader(socket.getInputStream(), 8192);
                }
                long began = System.nanoTime();
                OutputStream out = socket.getOutputStream();
                out.write(request);
                out.write(partHead);
                for (long left = size; left > 0; ) {
                    int n = (int) Math.min(chunk.length, left);
                    out.write(chunk, 0, n);
                    units.add(n);
                    left -= n;
                }
                out.write(partTail);
                out.flush();
                Head head = in.head();
                String answer = in.body(head).rest().trim();
                long took = System.nanoTime() - began;
                done++;
                uploads.increment();
                maxUploadNanos.accumulateAndGet(took, Math::max);
                minUploadNanos.accumulateAndGet(took, Math::min);
                if (head.status != 200 || !answer.equals(Long.toString(size))) {
                    wrongSizes.increment();
                    fail("status " + head.status + ", answer '" + abbreviate(answer) + "' (expected: " + size + ")");
                }
                if (head.close) {
                    open.remove(socket);
                    socket.close();
                    socket = null;
                }
            }
        } catch (IOException e) {
            fail(e.getClass().getSimpleName() + ": " + e.getMessage());
        } finally {
            if (socket != null) {
                open.remove(socket);
                try {
                    socket.close();
                } catch (IOException ignored) {
                    // closing after the run
                }
            }
        }
    }

    // ---- both ----

    private boolean over() {
        return stopping || System.nanoTime() >= deadlineNanos;
    }

    /**
     * Writes the timeline until the run is over, then waits for the connections: those still blocked in a read
     * (an sse client whose server sends nothing more) get their sockets closed after a second.
     */
    private void runTimeline(List<Thread> threads) throws Exception {
        try (PrintWriter t = timeline == null ? null : new PrintWriter(Files.newBufferedWriter(timeline))) {
            while (!over() && threads.stream().anyMatch(Thread::isAlive)) {
                record(t);
                Thread.sleep(100);
                if (untilFile != null && Files.exists(untilFile)) {
                    stopping = true;
                }
            }
            stopping = true;
            record(t);
            long giveUp = System.nanoTime() + TimeUnit.SECONDS.toNanos(1);
            for (Thread thread : threads) {
                // an upload under way finishes: it is bounded by its size, not by the clock
                long left = mode.equals("upload") ? Long.MAX_VALUE : giveUp - System.nanoTime();
                if (!thread.join(java.time.Duration.ofNanos(Math.max(1, left)))) {
                    break;
                }
            }
            for (Socket s : open) {
                s.close();
            }
            for (Thread thread : threads) {
                thread.join();
            }
            record(t);
        }
    }

    private void record(PrintWriter t) {
        if (t != null) {
            t.println(System.currentTimeMillis() + "," + units.sum());
            t.flush();
        }
    }

    private void fail(String why) {
        failed.incrementAndGet();
        failures.computeIfAbsent(abbreviate(why.replaceAll("[0-9]+", "N")), k -> new AtomicInteger())
                .incrementAndGet();
    }

    private String failuresJson() {
        StringBuilder b = new StringBuilder("{");
        new TreeMap<>(failures)
                .forEach((k, v) -> b.append(b.length() > 1 ? "," : "")
                        .append('"')
                        .append(k.replace("\\", "\\\\").replace("\"", "'"))
                        .append("\":")
                        .append(v.get()));
        return b.append('}').toString();
    }

    private static String abbreviate(String s) {
        return s.length() > 120 ? s.substring(0, 120) + "..." : s;
    }

    private static void sleepUntil(long nanos) throws InterruptedException {
        long left = nanos - System.nanoTime();
        if (left > 0) {
            Thread.sleep(java.time.Duration.ofNanos(left));
        }
    }

    private static int positive(Map<String, String> o, String name, int otherwise) {
        int v = Integer.parseInt(o.getOrDefault(name, Integer.toString(otherwise)));
        if (v <= 0) {
            throw new IllegalArgumentException(name + ": " + v + " (expected: > 0)");
        }
        return v;
    }

    // ---- HTTP/1.1 and SSE, as little of them as the two endpoints need ----
    //
    // Byte arrays of their own rather than a BufferedInputStream: at 80,000 events a second a read() per byte
    // (each taking the stream's lock) and a String per line made the client, not the server, the bottleneck.

    record Head(int status, long length, boolean chunked, boolean close) {}

    /** One connection's input, through a buffer of its own: a read of the socket takes at most its size. */
    static final class HttpReader {

        private final InputStream in;
        private final byte[] buf;
        private int pos;
        private int lim;

        HttpReader(InputStream socket, int buffer) {
            this.in = socket;
            this.buf = new byte[buffer];
        }

        Head head() throws IOException {
            String status = line();
            if (status == null) {
                throw new IOException("the connection closed before an answer");
            }
            String[] parts = status.split(" ", 3);
            if (parts.length < 2 || !parts[0].startsWith("HTTP/1.")) {
                throw new IOException("not an HTTP/1.1 status line: " + abbreviate(status));
            }
            long length = -1;
            boolean chunked = false;
            boolean close = parts[0].equals("HTTP/1.0");
            String line;
            while ((line = line()) != null && !line.isEmpty()) {
                int colon = line.indexOf(':');
                if (colon < 0) {
                    continue;
                }
                String name = line.substring(0, colon).trim().toLowerCase(Locale.ROOT);
                String value = line.substring(colon + 1).trim().toLowerCase(Locale.ROOT);
                switch (name) {
                    case "content-length" -> length = Long.parseLong(value);
                    case "transfer-encoding" -> chunked = value.contains("chunked");
                    case "connection" -> close = value.contains("close") || (close && !value.contains("keep-alive"));
                    default -> {}
                }
            }
            return new Head(Integer.parseInt(parts[1]), length, chunked, close || (length < 0 && !chunked));
        }

        Body body(Head head) {
            return new Body(this, head.chunked ? -1 : head.length, head.chunked);
        }

        /** One line of the head or of a chunk's size, without its CRLF; null at the end of the stream. */
        String line() throws IOException {
            StringBuilder b = new StringBuilder();
            while (true) {
                if (pos == lim && fill() < 0) {
                    return b.isEmpty() ? null : b.toString();
                }
                byte c = buf[pos++];
                if (c == '\n') {
                    int n = b.length();
                    return n > 0 && b.charAt(n - 1) == '\r' ? b.substring(0, n - 1) : b.toString();
                }
                b.append((char) c);
            }
        }

        /** Up to {@code len} bytes into {@code dst}: what the buffer holds, else one read of the socket; -1 at its end. */
        int read(byte[] dst, int off, int len) throws IOException {
            if (pos == lim && fill() < 0) {
                return -1;
            }
            int n = Math.min(len, lim - pos);
            System.arraycopy(buf, pos, dst, off, n);
            pos += n;
            return n;
        }

        private int fill() throws IOException {
            int n = in.read(buf, 0, buf.length);
            pos = 0;
            lim = Math.max(n, 0);
            return n;
        }
    }

    /** A response body: chunked, of a known length, or up to the end of the stream. */
    static final class Body {

        private final HttpReader in;
        private final boolean chunked;
        private long left; // of the current chunk, or of the body; -1: up to the end of the stream
        private boolean ended;
        private boolean whole; // it ended as its framing says: the last chunk, or its length read

        Body(HttpReader in, long length, boolean chunked) {
            this.in = in;
            this.chunked = chunked;
            this.left = chunked ? 0 : length;
        }

        /** Up to {@code len} bytes of the body into {@code dst}; -1 at its end. */
        int read(byte[] dst, int off, int len) throws IOException {
            if (ended) {
                return -1;
            }
            if (chunked && left == 0 && !nextChunk()) {
                ended = true;
                return -1;
            }
            if (left == 0) {
                ended = true;
                whole = true;
                return -1;
            }
            int n = in.read(dst, off, left < 0 ? len : (int) Math.min(len, left));
            if (n < 0) {
                ended = true;
                return -1;
            }
            if (left > 0) {
                left -= n;
            }
            return n;
        }

        /** Reads the next chunk's size line (after the CRLF that ends the previous chunk); false for the last chunk. */
        private boolean nextChunk() throws IOException {
            String size = in.line();
            if (size != null && size.isEmpty()) {
                size = in.line();
            }
            if (size == null) {
                return false; // the connection closed between chunks: not whole
            }
            int ext = size.indexOf(';');
            left = Long.parseLong((ext < 0 ? size : size.substring(0, ext)).trim(), 16);
            if (left > 0) {
                return true;
            }
            String trailer;
            do {
                trailer = in.line(); // the trailer, up to its empty line: the connection's next answer follows
            } while (trailer != null && !trailer.isEmpty());
            whole = true;
            return false;
        }

        /** Whether the body ended as its framing says (the last chunk, or all its length), not by a closed connection. */
        boolean endedCleanly() {
            return whole;
        }

        /** The rest of the body as text. */
        String rest() throws IOException {
            byte[] b = new byte[4096];
            int n = 0;
            int r;
            while ((r = read(b, n, b.length - n)) > 0) {
                n += r;
                if (n == b.length) {
                    throw new IOException("an answer longer than 4 KiB");
                }
            }
            return new String(b, 0, n, StandardCharsets.UTF_8);
        }
    }

    /**
     * Server-sent events from a body, parsed in place in a buffer of their own. An event is a block of lines ended
     * by an empty line; comment lines (":...") and a block without data are not events.
     */
    static final class Events {

        private static final byte[] ID = "id:".getBytes(StandardCharsets.US_ASCII);
        private static final byte[] DATA = "data:".getBytes(StandardCharsets.US_ASCII);

        private final Body body;
        private final byte[] buf = new byte[512];
        private int pos;
        private int lim;

        Events(Body body) {
            this.body = body;
        }

        /** Reads up to the end of the next event and answers its id; -1 at the end of the stream. */
        long next() throws IOException {
            long id = -1;
            boolean data = false;
            while (true) {
                int nl = pos;
                while (nl < lim && buf[nl] != '\n') {
                    nl++;
                }
                if (nl == lim) {
                    if (!fill()) {
                        return -1;
                    }
                    continue;
                }
                int end = nl > pos && buf[nl - 1] == '\r' ? nl - 1 : nl;
                if (end == pos) {
                    if (data) {
                        pos = nl + 1;
                        if (id < 0) {
                            throw new IOException("an event without an id");
                        }
                        return id;
                    }
                    id = -1;
                } else if (startsWith(ID, end)) {
                    id = number(pos + ID.length, end);
                } else if (startsWith(DATA, end)) {
                    data = true;
                }
                pos = nl + 1;
            }
        }

        /** Moves what is left to the front and reads more after it; false at the end of the body. */
        private boolean fill() throws IOException {
            if (pos > 0) {
                System.arraycopy(buf, pos, buf, 0, lim - pos);
                lim -= pos;
                pos = 0;
            }
            if (lim == buf.length) {
                throw new IOException("a line longer than " + buf.length + " bytes");
            }
            int n = body.read(buf, lim, buf.length - lim);
            if (n < 0) {
                return false;
            }
            lim += n;
            return true;
        }

        private boolean startsWith(byte[] field, int end) {
            return end - pos >= field.length && Arrays.equals(buf, pos, pos + field.length, field, 0, field.length);
        }

        /** A field's decimal value, after the one space the format allows after the colon. */
        private long number(int from, int end) throws IOException {
            if (from < end && buf[from] == ' ') {
                from++;
            }
            if (from == end) {
                throw new IOException("an empty id");
            }
            long v = 0;
            for (int i = from; i < end; i++) {
                int d = buf[i] - '0';
                if (d < 0 || d > 9) {
                    throw new IOException("an id that is not a number: "
                            + new String(buf, from, end - from, StandardCharsets.US_ASCII));
                }
                v = v * 10 + d;
            }
            return v;
        }
    }
}
