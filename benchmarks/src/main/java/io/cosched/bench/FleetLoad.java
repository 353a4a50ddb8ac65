package io.cosched.bench;

import java.io.IOException;
import java.io.PrintWriter;
import java.net.ConnectException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpConnectTimeoutException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * The fleet harness's load (benchmarks/fleet.sh): requests at a fixed rate through a load balancer, GETs of an
 * account and POSTs of a deposit, each sent when it is due whatever became of the earlier ones (latency counted
 * from when it was due), and nothing retried by the client: what the balancer does not save is counted as failed,
 * by status or by client error. At the end it reads the harness's events and says, per event, what was sent
 * during it, what failed and how, and the p99 during it against before it.
 *
 * <pre>
 * FleetLoad --url=http://127.0.0.1:18080 [--rate=200] [--seconds=60] [--post-share=0.2] [--accounts=1000]
 *           [--get-path=/api/accounts/{id} (the GETs' path; {id} is an account)]
 *           [--user=user:secret] [--timeout-ms=10000] [--log=FILE (a line per request: due epoch ms, latency ms,
 *           method, status or error)] [--events=FILE (lines "epoch-ms begin NAME" and "epoch-ms end NAME", written
 *           by the harness while the load runs)] [--before-seconds=15]
 * </pre>
 *
 * Prints one summary line per event and one for the whole run, as JSON: p50 and p99 of the 2xx answers (during the
 * event and before it), and of the failed ones (how fast a shed request is told).
 */
public final class FleetLoad {

    /** One request's outcome: when it was due, how long it took, and its status (or 0 and the client error). */
    record Outcome(long dueEpochMillis, double latencyMillis, boolean post, int status, String error) {
        boolean ok() {
            return status >= 200 && status < 300;
        }

        String what() {
            return status > 0 ? Integer.toString(status) : error;
        }
    }

    private FleetLoad() {}

    public static void main(String[] args) throws Exception {
        Map<String, String> o = new TreeMap<>();
        for (String a : args) {
            if (!a.startsWith("--")) {
                throw new IllegalArgumentException("unexpected argument '" + a + "' (expected --name=value)");
            }
            int eq = a.indexOf('=');
            o.put(eq < 0 ? a.substring(2) : a.substring(2, eq), eq < 0 ? "" : a.substring(eq + 1));
        }
        URI base = URI.create(o.getOrDefault("url", "http://127.0.0.1:18080"));
        double rate = positive(o, "rate", "200");
        double seconds = positive(o, "seconds", "60");
        double postShare = Double.parseDouble(o.getOrDefault("post-share", "0.2"));
        if (postShare < 0 || postShare > 1) {
            throw new IllegalArgumentException("--post-share=" + postShare + ": must be within 0..1");
        }
        int accounts = (int) positive(o, "accounts", "1000");
        String getPath = o.getOrDefault("get-path", "/api/accounts/{id}");
        Duration timeout = Duration.ofMillis((long) positive(o, "timeout-ms", "10000"));
        String auth = "Basic "
                + Base64.getEncoder()
                        .encodeToString(o.getOrDefault("user", "user:secret").getBytes(StandardCharsets.UTF_8));
        double beforeSeconds = positive(o, "before-seconds", "15");

        HttpClient client = HttpClient.newBuilder()
                .version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(Duration.ofSeconds(2))
                .build();
        ConcurrentLinkedQueue<Outcome> outcomes = new ConcurrentLinkedQueue<>();
        List<CompletableFuture<Void>> pending = new ArrayList<>();
        long total = (long) (rate * seconds);
        long startNanos = System.nanoTime();
        long startEpoch = System.currentTimeMillis();
        double intervalNanos = 1e9 / rate;
        for (long i = 0; i < total; i++) {
            long due = startNanos + (long) (i * intervalNanos);
            long wait = due - System.nanoTime();
            if (wait > 0) {
                LockSupport.parkNanos(wait);
            }
            long dueEpoch = startEpoch + TimeUnit.NANOSECONDS.toMillis(due - startNanos);
            // a fixed pattern, so every run sends the same requests: every 1/postShare-th request is a POST
            boolean post = postShare > 0 && Math.floor((i + 1) * postShare) > Math.floor(i * postShare);
            long account = 1 + (i * 7919) % accounts;
            HttpRequest.Builder b = HttpRequest.newBuilder()
                    .timeout(timeout)
                    .header("Authorization", auth)
                    .header("Content-Type", "application/json");
            if (post) {
                b.uri(base.resolve("/api/accounts/" + account + "/deposits"))
                        .POST(HttpRequest.BodyPublishers.ofString("{\"cents\":100,\"reference\":\"fleet-" + i + "\"}"));
            } else {
                b.uri(base.resolve(getPath.replace("{id}", Long.toString(account))))
                        .GET();
            }
            pending.add(client.sendAsync(b.build(), HttpResponse.BodyHandlers.discarding())
                    .handle((r, e) -> {
                        double latency = (System.nanoTime() - due) / 1e6;
                        outcomes.add(
                                e == null
                                        ? new Outcome(dueEpoch, latency, post, r.statusCode(), null)
                                        : new Outcome(dueEpoch, latency, post, 0, errorName(e)));
                        return null;
                    }));
        }
        CompletableFuture.allOf(pending.toArray(CompletableFuture[]::new))
                .get(timeout.toMillis() + 30_000, TimeUnit.MILLISECONDS);

        List<Outcome> all = new ArrayList<>(outcomes);
        all.sort((a, b) -> Long.compare(a.dueEpochMillis(), b.dueEpochMillis()));
        if (o.containsKey("log")) {
            try (PrintWriter w = new PrintWriter(Files.newBufferedWriter(Path.of(o.get("log"))))) {
                w.println("due_epoch_ms,latency_ms,method,outcome");
                for (Outcome x : all) {
                    w.printf(
                            Locale.ROOT,
                            "%d,%.2f,%s,%s%n",
                            x.dueEpochMillis(),
                            x.latencyMillis(),
                            x.post() ? "POST" : "GET",
                            x.what());
                }
            }
        }
        long endEpoch = startEpoch + (long) (seconds * 1000);
        if (o.containsKey("events") && Files.exists(Path.of(o.get("events")))) {
            Map<String, long[]> spans = new TreeMap<>();
            for (String line : Files.readAllLines(Path.of(o.get("events")))) {
                String[] f = line.trim().split("\\s+", 3);
                if (f.length < 3) {
                    continue;
                }
                long[] span = spans.computeIfAbsent(f[2], k -> new long[] {-1, -1});
                span["begin".equals(f[1]) ? 0 : 1] = Long.parseLong(f[0]);
            }
            for (Map.Entry<String, long[]> s : spans.entrySet()) {
                long begin = s.getValue()[0];
                long end = s.getValue()[1] < 0 ? endEpoch : s.getValue()[1];
                if (begin < 0) {
                    continue;
                }
                List<Outcome> before = between(all, begin - (long) (beforeSeconds * 1000), begin);
                List<Outcome> during = between(all, begin, end);
                System.out.println(summary(s.getKey(), during, before, end - begin));
            }
        }
        System.out.println(summary("run", all, List.of(), endEpoch - startEpoch));
    }

    private static double positive(Map<String, String> o, String name, String otherwise) {
        String v = o.getOrDefault(name, otherwise);
        double d = Double.parseDouble(v);
        if (!(d > 0)) {
            throw new IllegalArgumentException("--" + name + "=" + v + ": must be above 0");
        }
        return d;
    }

    private static String errorName(Throwable e) {
        Throwable t = e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
        if (t instanceof HttpConnectTimeoutException) {
            return "connect-timeout";
        }
        if (t instanceof HttpTimeoutException) {
            return "timeout";
        }
        if (t instanceof ConnectException) {
            return "refused";
        }
        if (t instanceof IOException) {
            String m = String.valueOf(t.getMessage()).toLowerCase(Locale.ROOT);
            return m.contains("reset") ? "reset" : m.contains("closed") || m.contains("eof") ? "closed" : "io";
        }
        return t.getClass().getSimpleName();
    }

    private static List<Outcome> between(List<Outcome> all, long from, long to) {
        List<Outcome> r = new ArrayList<>();
        for (Outcome x : all) {
            if (x.dueEpochMillis() >= from && x.dueEpochMillis() < to) {
                r.add(x);
            }
        }
        return r;
    }

    private static double p99(List<Outcome> xs) {
        return percentile(xs, 0.99);
    }

    private static double percentile(List<Outcome> xs, double p) {
        double[] l = xs.stream().mapToDouble(Outcome::latencyMillis).toArray();
        if (l.length == 0) {
            return Double.NaN;
        }
        Arrays.sort(l);
        return l[Math.max(0, Math.min(l.length - 1, (int) Math.ceil(l.length * p) - 1))];
    }

    private static String summary(String name, List<Outcome> xs, List<Outcome> before, long millis) {
        long ok = xs.stream().filter(Outcome::ok).count();
        Map<String, Integer> failed = new TreeMap<>();
        long failedPosts = 0;
        for (Outcome x : xs) {
            if (!x.ok()) {
                failed.merge(x.what(), 1, Integer::sum);
                failedPosts += x.post() ? 1 : 0;
            }
        }
        StringBuilder f = new StringBuilder("{");
        failed.forEach((k, v) -> f.append(f.length() > 1 ? "," : "")
                .append('"')
                .append(k)
                .append("\":")
                .append(v));
        f.append('}');
        return String.format(
                Locale.ROOT,
                "{\"event\":\"%s\",\"seconds\":%.1f,\"sent\":%d,\"ok\":%d,\"failed\":%d,\"failedPosts\":%d,"
                        + "\"failedBy\":%s,\"p99Ms\":%.1f,\"p99BeforeMs\":%.1f,\"p50Ms\":%.1f,\"p50BeforeMs\":%.1f,"
                        + "\"failedP50Ms\":%.1f,\"failedP99Ms\":%.1f}",
                name,
                millis / 1000.0,
                xs.size(),
                ok,
                xs.size() - ok,
                failedPosts,
                f,
                p99(xs.stream().filter(Outcome::ok).toList()),
                p99(before.stream().filter(Outcome::ok).toList()),
                percentile(xs.stream().filter(Outcome::ok).toList(), 0.5),
                percentile(before.stream().filter(Outcome::ok).toList(), 0.5),
                percentile(xs.stream().filter(x -> !x.ok()).toList(), 0.5),
                p99(xs.stream().filter(x -> !x.ok()).toList()));
    }
}
