package io.cosched.bench;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.WebSocket;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * A fixed rate of WebSocket messages over a number of connections: message k is due at start + k / rate on
 * connection k mod connections, and its latency counts from when it was due, so that a server that falls behind
 * shows it. The first {@code --warm} seconds are not counted; over the next {@code --seconds}, the latencies of the
 * messages due then, and the server's ({@code --server-pid}) CPU time and context switches, per message.
 *
 * <pre>
 * java -cp benchmarks.jar io.cosched.bench.WsLoad --url=ws://127.0.0.1:18080/ws/echo --rate=2000 --connections=100 \
 *     --warm=10 --seconds=20 --server-pid=1234
 * </pre>
 *
 * Prints one JSON line.
 */
public final class WsLoad {

    private WsLoad() {}

    /** One connection: its socket, the due times of its messages not answered yet, its send chain. */
    private static final class Conn implements WebSocket.Listener {
        final ArrayDeque<Long> due = new ArrayDeque<>();
        final StringBuilder text = new StringBuilder();
        WebSocket socket;
        CompletableFuture<?> sending = CompletableFuture.completedFuture(null);
        Recorder recorder;

        @Override
        public CompletionStage<?> onText(WebSocket webSocket, CharSequence data, boolean last) {
            text.append(data);
            if (last) {
                text.setLength(0);
                Long d;
                synchronized (due) {
                    d = due.poll();
                }
                if (d != null) {
                    recorder.answered(d, System.nanoTime());
                }
            }
            webSocket.request(1);
            return null;
        }

        @Override
        public void onError(WebSocket webSocket, Throwable error) {
            recorder.failed.incrementAndGet();
        }
    }

    /** The latencies of the messages due in the counted window. */
    private static final class Recorder {
        final long from;
        final long to;
        final long[] latencies;
        final AtomicLong count = new AtomicLong();
        final AtomicLong answered = new AtomicLong();
        final AtomicLong failed = new AtomicLong();

        Recorder(long from, long to, int capacity) {
            this.from = from;
            this.to = to;
            this.latencies = new long[capacity];
        }

        void answered(long due, long now) {
            answered.incrementAndGet();
            if (due >= from && due < to) {
                long i = count.getAndIncrement();
                if (i < latencies.length) {
                    latencies[(int) i] = now - due;
                }
            }
        }
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> o = new TreeMap<>();
        for (String a : args) {
            int eq = a.indexOf('=');
            if (!a.startsWith("--") || eq < 0) {
                throw new IllegalArgumentException("argument: '" + a + "' (expected: --name=value)");
            }
            o.put(a.substring(2, eq), a.substring(eq + 1));
        }
        URI url = URI.create(o.getOrDefault("url", "ws://127.0.0.1:18080/ws/echo"));
        double rate = Double.parseDouble(o.getOrDefault("rate", "1000"));
        int connections = Integer.parseInt(o.getOrDefault("connections", "100"));
        double warm = Double.parseDouble(o.getOrDefault("warm", "10"));
        double seconds = Double.parseDouble(o.getOrDefault("seconds", "20"));
        long pid = Long.parseLong(o.getOrDefault("server-pid", "0"));
        int ids = 1000;

        HttpClient client = HttpClient.newHttpClient();
        Conn[] conns = new Conn[connections];
        long start0 = System.nanoTime();
        long warmEnd = start0 + (long) ((warm + 1) * 1e9);
        long end = warmEnd + (long) (seconds * 1e9);
        Recorder recorder =
                new Recorder(warmEnd, end, (int) Math.min(Integer.MAX_VALUE - 8, rate * seconds * 1.2 + 16));
        for (int i = 0; i < connections; i++) {
            Conn c = new Conn();
            c.recorder = recorder;
            c.socket = client.newWebSocketBuilder()
                    .connectTimeout(Duration.ofSeconds(10))
                    .buildAsync(url, c)
                    .get(30, TimeUnit.SECONDS);
            conns[i] = c;
        }
        long start = System.nanoTime();
        ServerCounters before = null;
        ServerCounters after = null;
        long periodNanos = (long) (1e9 / rate);
        long sent = 0;
        for (long k = 0; ; k++) {
            long due = start + k * periodNanos;
            if (due >= end) {
                break;
            }
            if (before == null && due >= warmEnd - 1_000_000) {
                before = pid == 0 ? null : ServerCounters.read(pid);
            }
            long now = System.nanoTime();
            if (due > now) {
                LockSupport.parkNanos(due - now);
            }
            Conn c = conns[(int) (k % connections)];
            String message = Long.toString(k % ids);
            synchronized (c.due) {
                c.due.add(due);
            }
            WebSocket socket = c.socket;
            c.sending = c.sending.thenCompose(x -> socket.sendText(message, true));
            sent++;
        }
        // the answers to the last messages of the window
        long waitUntil = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (recorder.answered.get() < sent && System.nanoTime() < waitUntil) {
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(10));
        }
        after = pid == 0 ? null : ServerCounters.read(pid);
        long measured = Math.min(recorder.count.get(), recorder.latencies.length);
        long[] lat = Arrays.copyOf(recorder.latencies, (int) measured);
        Arrays.sort(lat);
        long dueInWindow = (long) (seconds * rate);
        long clk = Long.parseLong(o.getOrDefault("clk-tck", "100")); // getconf CLK_TCK
        double cpuUs = before == null || after == null
                ? 0
                : (after.ticks() - before.ticks()) * 1e6 / clk / Math.max(1, dueInWindow);
        double cs =
                before == null || after == null ? 0 : (double) after.switchesSince(before) / Math.max(1, dueInWindow);
        for (Conn c : conns) {
            c.socket.abort();
        }
        System.out.println(String.format(
                Locale.ROOT,
                "{\"url\":\"%s\",\"rate\":%.0f,\"connections\":%d,\"sent\":%d,\"answered\":%d,\"measured\":%d,"
                        + "\"failed\":%d,\"p50Ms\":%.3f,\"p99Ms\":%.3f,\"p999Ms\":%.3f,\"maxMs\":%.3f,"
                        + "\"cpuUsPerMsg\":%.2f,\"csPerMsg\":%.3f}",
                url,
                rate,
                connections,
                sent,
                recorder.answered.get(),
                measured,
                recorder.failed.get() + (sent - recorder.answered.get()),
                ms(lat, 0.5),
                ms(lat, 0.99),
                ms(lat, 0.999),
                lat.length == 0 ? 0 : lat[lat.length - 1] / 1e6,
                cpuUs,
                cs));
    }

    private static double ms(long[] sorted, double q) {
        if (sorted.length == 0) {
            return 0;
        }
        return sorted[(int) Math.min(sorted.length - 1, Math.floor(q * sorted.length))] / 1e6;
    }
}
