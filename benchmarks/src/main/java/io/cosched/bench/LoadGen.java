package io.cosched.bench;

import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpClientCodec;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import java.io.IOException;
import java.net.ConnectException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * The fault and soak suite's load generator (benchmarks/soak.sh): HTTP/1.1 GETs against one server,
 * counting what wrk does not: answers by status, latency of the 2xx answers apart from the rest, and
 * what became of requests that got no answer: refused at connect (never accepted), timed out, or lost
 * (the connection closed after the request was written). A request written on a kept-alive connection
 * that the server closed before answering is sent once more on a new connection and counted as
 * retried, as HTTP clients do for idempotent requests (RFC 9112, 9.3.1); lost is a request that got
 * no answer on a connection of its own.
 *
 * <pre>
 * LoadGen --url=http://127.0.0.1:8080 --paths=/a,/b [--connections=100] [--seconds=10]
 *         [--rate=0 (closed loop: each connection sends its next request on the answer; else requests
 *          per second, latency counted from when each was due)] [--new-connections (one per request)]
 *         [--timeout-ms=5000] [--warmup-seconds=0 (load first, counted nowhere)] [--label=name]
 *         [--header='Name: value' (sent with every request)]
 *         [--server-pid=N (also report that process's CPU time and context switches from a second before the
 *          counted part to its end, per request answered that came due in that time (the reading holds the load
 *          for tens of ms, so it is kept out of the counted part's latency): /proc/N/stat utime + stime,
 *          /proc/N/task/(each)/status switches; and the same per group of its threads, a thread's name with its
 *          digits as '#', busiest first; a thread that ended in between is not counted)]
 *         [--clock-ticks=100 (the kernel's USER_HZ, getconf CLK_TCK, for --server-pid)]
 *         [--latency-log=FILE (every counted answer as a CSV line: when it was due, ms since the epoch; its
 *          latency in ms; its status; for lining the slow ones up with a GC log)]
 * </pre>
 * Prints one JSON line. Everything runs on one event loop thread, so nothing is shared.
 */
public final class LoadGen {

    private final String host;
    private final int port;
    private final String[] paths;
    private final int connections;
    private final long durationNanos;
    private final long warmupNanos;
    private final double rate;
    private final boolean newConnections;
    private final long timeoutNanos;
    private final String label;
    private final String headerName;
    private final String headerValue;
    private final long serverPid;
    private final int clockTicks;
    private final String latencyLog;
    private final EventLoop eventLoop;
    private final Bootstrap bootstrap;

    // confined to the event loop
    private final ArrayDeque<Conn> idle = new ArrayDeque<>();
    private final ArrayDeque<Req> waiting = new ArrayDeque<>();
    private int open;
    private int inFlight;
    private long issued;
    private long started;
    private boolean stopping;
    private final Map<Integer, Long> statuses = new TreeMap<>();
    private long[] okNanos = new long[1 << 16];
    private int okCount;
    private long[] allNanos = new long[1 << 16];
    private int allCount;
    // with --latency-log: per counted answer, when it was due (ns after started) and its status
    private long[] allDue = new long[1 << 16];
    private int[] allStatus = new int[1 << 16];
    private long startedEpochMillis;
    private long refused;
    private long timedOut;
    private long lost;
    private long retried;
    private long otherErrors;
    private long unsent;
    private final CompletableFuture<Void> done = new CompletableFuture<>();
    // the server's counters a second before the counted part began and when the last counted request settled
    private ServerCounters serverAtWindow;
    private ServerCounters serverAtEnd;
    // the server's CPU and switches are read from this long after the start (a second before the counted part), and
    // divided by the requests answered that came due since
    private final long cpuFromNanos;
    private long cpuCount;

    private LoadGen(Map<String, String> o, EventLoop eventLoop, boolean epoll) {
        URI url = URI.create(o.getOrDefault("url", "http://127.0.0.1:8080"));
        this.host = url.getHost();
        this.port = url.getPort() > 0 ? url.getPort() : 80;
        this.paths = o.getOrDefault("paths", "/").split(",");
        this.connections = Integer.parseInt(o.getOrDefault("connections", "100"));
        this.durationNanos =
                TimeUnit.MILLISECONDS.toNanos((long) (Double.parseDouble(o.getOrDefault("seconds", "10")) * 1000));
        this.warmupNanos = TimeUnit.MILLISECONDS.toNanos(
                (long) (Double.parseDouble(o.getOrDefault("warmup-seconds", "0")) * 1000));
        this.rate = Double.parseDouble(o.getOrDefault("rate", "0"));
        this.newConnections = o.containsKey("new-connections");
        this.timeoutNanos = TimeUnit.MILLISECONDS.toNanos(Long.parseLong(o.getOrDefault("timeout-ms", "5000")));
        this.label = o.getOrDefault("label", "load");
        String header = o.get("header");
        int colon = header == null ? -1 : header.indexOf(':');
        if (header != null && colon <= 0) {
            throw new IllegalArgumentException("--header: '" + header + "' (expected: Name: value)");
        }
        this.headerName = header == null ? null : header.substring(0, colon).trim();
        this.headerValue = header == null ? null : header.substring(colon + 1).trim();
        this.serverPid = Long.parseLong(o.getOrDefault("server-pid", "0"));
        this.clockTicks = Integer.parseInt(o.getOrDefault("clock-ticks", "100"));
        this.latencyLog = o.get("latency-log");
        this.cpuFromNanos = Math.max(0, warmupNanos - TimeUnit.SECONDS.toNanos(1));
        if (serverPid < 0 || clockTicks <= 0) {
            throw new IllegalArgumentException("--server-pid=" + serverPid + ", --clock-ticks=" + clockTicks
                    + " (expected: a pid >= 0, 0 for none, and ticks > 0)");
        }
        this.eventLoop = eventLoop;
        this.bootstrap = new Bootstrap()
                .group(eventLoop)
                .channel(epoll ? EpollSocketChannel.class : NioSocketChannel.class)
                .option(ChannelOption.TCP_NODELAY, true)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, 5000)
                .handler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        ch.pipeline().addLast(new HttpClientCodec(), new HttpObjectAggregator(1 << 20), new Answers());
                    }
                });
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> o = new TreeMap<>();
        for (String a : args) {
            if (!a.startsWith("--")) {
                throw new IllegalArgumentException("argument: '" + a + "' (expected: --name[=value])");
            }
            int eq = a.indexOf('=');
            o.put(eq < 0 ? a.substring(2) : a.substring(2, eq), eq < 0 ? "" : a.substring(eq + 1));
        }
        boolean epoll = Epoll.isAvailable();
        MultiThreadIoEventLoopGroup group =
                new MultiThreadIoEventLoopGroup(1, epoll ? EpollIoHandler.newFactory() : NioIoHandler.newFactory());
        try {
            LoadGen g = new LoadGen(o, group.next(), epoll);
            g.eventLoop.execute(g::begin);
            g.done.get();
            g.writeLatencyLog();
            System.out.println(g.report());
        } finally {
            group.shutdownGracefully(0, 0, TimeUnit.MILLISECONDS).sync();
        }
    }

    /** One request: its path, when it was due (latency counts from then), and whether it is a retry. */
    private record Req(String path, long due, boolean retry) {}

    /** One connection and the request it carries. */
    private final class Conn {
        Channel channel;
        Req req;
        boolean reused;
        boolean answered;
        io.netty.util.concurrent.ScheduledFuture<?> timeout;
    }

    private void begin() {
        started = System.nanoTime();
        startedEpochMillis = System.currentTimeMillis();
        if (rate > 0) {
            eventLoop.scheduleAtFixedRate(this::tick, 0, 1, TimeUnit.MILLISECONDS);
        } else {
            for (int i = 0; i < connections; i++) {
                send(new Req(nextPath(), System.nanoTime(), false));
            }
        }
        if (serverPid > 0) {
            // a second before the counted part: reading a JVM's threads holds this event loop for 30-70 ms, and every
            // request
            // due meanwhile is answered that much late; read at the counted part's start, the pause was in every
            // stack's latency (a thread of its own for the reading still held the event loop 13 ms on the one load
            // core)
            eventLoop.schedule(
                    () -> serverAtWindow = ServerCounters.read(serverPid), cpuFromNanos, TimeUnit.NANOSECONDS);
        }
        eventLoop.schedule(this::stop, warmupNanos + durationNanos, TimeUnit.NANOSECONDS);
    }

    private String nextPath() {
        return paths[(int) (issued++ % paths.length)];
    }

    /** Open loop: sends what has come due since the last tick. */
    private void tick() {
        if (stopping) {
            return;
        }
        long now = System.nanoTime();
        long due = (long) ((now - started) * rate / 1e9);
        while (issued < due) {
            long at = started + (long) (issued * 1e9 / rate);
            send(new Req(nextPath(), at, false));
        }
    }

    /** Whether a request counts: it came due after the warm-up. */
    private boolean counted(Req req) {
        return req.due() - started >= warmupNanos;
    }

    private void stop() {
        stopping = true;
        unsent += waiting.size(); // open loop: due, but no connection came free in time
        waiting.clear();
        maybeDone();
    }

    private void maybeDone() {
        if (stopping && inFlight == 0 && !done.isDone()) {
            if (serverPid > 0) {
                serverAtEnd = ServerCounters.read(serverPid);
            }
            for (Conn c : idle) {
                c.channel.close();
            }
            done.complete(null);
        }
    }

    private void send(Req req) {
        Conn c = newConnections ? null : idle.pollFirst();
        if (c != null) {
            write(c, req);
        } else if (open < connections) {
            connect(req);
        } else {
            waiting.addLast(req);
        }
    }

    private void connect(Req req) {
        open++;
        inFlight++;
        Conn c = new Conn();
        c.req = req;
        ChannelFuture f = bootstrap.connect(host, port);
        c.channel = f.channel();
        c.channel.attr(CONN).set(c);
        f.addListener(r -> {
            if (r.isSuccess()) {
                inFlight--;
                write(c, c.req);
            } else {
                open--;
                inFlight--;
                if (!counted(c.req)) {
                    // during the warm-up
                } else if (r.cause() instanceof ConnectException) {
                    refused++;
                } else {
                    otherErrors++;
                }
                eventLoop.schedule(LoadGen.this::next, 10, TimeUnit.MILLISECONDS); // not a spin of refused connects
            }
        });
    }

    private void write(Conn c, Req req) {
        inFlight++;
        c.req = req;
        c.answered = false;
        DefaultFullHttpRequest r = new DefaultFullHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.GET, req.path());
        r.headers().set(HttpHeaderNames.HOST, host + ":" + port);
        if (headerName != null) {
            r.headers().set(headerName, headerValue);
        }
        if (newConnections) {
            r.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
        }
        c.timeout = eventLoop.schedule(
                () -> expired(c, req), Math.max(0, req.due() + timeoutNanos - System.nanoTime()), TimeUnit.NANOSECONDS);
        c.channel.writeAndFlush(r);
    }

    private void expired(Conn c, Req req) {
        if (c.req == req && !c.answered) {
            timedOut += counted(req) ? 1 : 0;
            c.answered = true; // settled: the close that follows is ours
            inFlight--;
            c.channel.close();
            next();
        }
    }

    private static final io.netty.util.AttributeKey<Conn> CONN = io.netty.util.AttributeKey.valueOf("loadgen.conn");

    private final class Answers extends SimpleChannelInboundHandler<FullHttpResponse> {
        @Override
        protected void channelRead0(ChannelHandlerContext ctx, FullHttpResponse res) {
            Conn c = ctx.channel().attr(CONN).get();
            if (c == null || c.answered) {
                return;
            }
            c.answered = true;
            c.timeout.cancel(false);
            inFlight--;
            long took = System.nanoTime() - c.req.due();
            int status = res.status().code();
            if (c.req.due() - started >= cpuFromNanos) {
                cpuCount++;
            }
            if (counted(c.req)) {
                statuses.merge(status, 1L, Long::sum);
                if (latencyLog != null) {
                    allDue = add(allDue, allCount, c.req.due() - started);
                    if (allCount == allStatus.length) {
                        allStatus = Arrays.copyOf(allStatus, allStatus.length * 2);
                    }
                    allStatus[allCount] = status;
                }
                allNanos = add(allNanos, allCount++, took);
                if (status / 100 == 2) {
                    okNanos = add(okNanos, okCount++, took);
                }
            }
            c.reused = true;
            if (newConnections || !HttpUtil.isKeepAlive(res)) {
                ctx.close();
            } else if (!stopping) {
                idle.addLast(c);
            } else {
                ctx.close();
            }
            next();
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            Conn c = ctx.channel().attr(CONN).get();
            if (c != null) {
                open--;
                idle.remove(c);
                if (c.req != null && !c.answered) { // inactive follows active: the request was written
                    c.answered = true;
                    if (c.timeout != null) {
                        c.timeout.cancel(false);
                    }
                    inFlight--;
                    if (c.reused && !c.req.retry()) {
                        retried += counted(c.req)
                                ? 1
                                : 0; // the server closed a kept-alive connection as the request went out
                        Req again = new Req(c.req.path(), c.req.due(), true);
                        connect(again);
                    } else if (counted(c.req)) {
                        lost++;
                    }
                }
                next();
            }
            ctx.fireChannelInactive();
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            ctx.close(); // a reset: channelInactive settles the request
        }
    }

    /** After a request settled: the next one, as the mode says. */
    private void next() {
        if (stopping) {
            maybeDone();
            return;
        }
        while (!waiting.isEmpty() && (!idle.isEmpty() && !newConnections || open < connections)) {
            send(waiting.pollFirst());
        }
        if (rate == 0 && inFlight + waiting.size() < connections) {
            send(new Req(nextPath(), System.nanoTime(), false));
        }
    }

    private static long[] add(long[] a, int i, long v) {
        if (i == a.length) {
            a = Arrays.copyOf(a, a.length * 2);
        }
        a[i] = v;
        return a;
    }

    private void writeLatencyLog() throws IOException {
        if (latencyLog == null) {
            return;
        }
        StringBuilder sb = new StringBuilder("due_epoch_ms,latency_ms,status\n");
        for (int i = 0; i < allCount; i++) {
            sb.append(String.format(
                    Locale.ROOT,
                    "%.3f,%.3f,%d%n",
                    startedEpochMillis + allDue[i] / 1e6,
                    allNanos[i] / 1e6,
                    allStatus[i]));
        }
        Files.writeString(Path.of(latencyLog), sb);
    }

    private String report() {
        double seconds = durationNanos / 1e9;
        StringBuilder sb = new StringBuilder();
        sb.append("{\"label\":\"")
                .append(label)
                .append("\",\"seconds\":")
                .append(fmt(seconds))
                .append(",\"answered\":")
                .append(allCount)
                .append(",\"ok\":")
                .append(okCount)
                .append(",\"okPerSecond\":")
                .append(fmt(okCount / seconds))
                .append(",\"statuses\":{");
        boolean first = true;
        for (Map.Entry<Integer, Long> e : statuses.entrySet()) {
            sb.append(first ? "" : ",")
                    .append('"')
                    .append(e.getKey())
                    .append("\":")
                    .append(e.getValue());
            first = false;
        }
        sb.append("},\"refused\":")
                .append(refused)
                .append(",\"timedOut\":")
                .append(timedOut)
                .append(",\"lost\":")
                .append(lost)
                .append(",\"retried\":")
                .append(retried)
                .append(",\"otherErrors\":")
                .append(otherErrors)
                .append(",\"unsent\":")
                .append(unsent)
                .append(",\"okMs\":")
                .append(percentiles(okNanos, okCount))
                .append(",\"allMs\":")
                .append(percentiles(allNanos, allCount));
        if (serverAtWindow != null && serverAtEnd != null && cpuCount > 0) {
            Map<String, long[]> deltas = ServerCounters.groupDeltas(serverAtWindow, serverAtEnd);
            long switches = serverAtEnd.switchesSince(serverAtWindow);
            sb.append(",\"server\":{\"cpuUsPerRequest\":")
                    .append(fmt((serverAtEnd.ticks() - serverAtWindow.ticks()) * 1e6 / clockTicks / cpuCount))
                    .append(",\"switchesPerRequest\":")
                    .append(String.format(Locale.ROOT, "%.3f", switches / (double) cpuCount))
                    .append(",\"threads\":[");
            // per group of threads, busiest first: CPU us, voluntary (it waited) and involuntary switches per request
            List<Map.Entry<String, long[]>> groups = new ArrayList<>();
            deltas.forEach((name, d) -> {
                if (d[0] > 0 || d[1] + d[2] > 0) {
                    groups.add(Map.entry(name, d));
                }
            });
            groups.sort((x, y) -> Long.compare(y.getValue()[0], x.getValue()[0]) != 0
                    ? Long.compare(y.getValue()[0], x.getValue()[0])
                    : Long.compare(y.getValue()[1], x.getValue()[1]));
            boolean firstGroup = true;
            for (Map.Entry<String, long[]> g : groups) {
                long[] d = g.getValue();
                sb.append(firstGroup ? "" : ",")
                        .append(String.format(
                                Locale.ROOT,
                                "{\"name\":\"%s\",\"cpuUs\":%.2f,\"voluntary\":%.3f,\"involuntary\":%.3f}",
                                g.getKey().replace("\\", "\\\\").replace("\"", "\\\""),
                                d[0] * 1e6 / clockTicks / cpuCount,
                                d[1] / (double) cpuCount,
                                d[2] / (double) cpuCount));
                firstGroup = false;
            }
            sb.append("]}");
        }
        sb.append('}');
        return sb.toString();
    }

    private static String percentiles(long[] a, int n) {
        if (n == 0) {
            return "null";
        }
        long[] s = Arrays.copyOf(a, n);
        Arrays.sort(s);
        return "{\"p50\":" + ms(s, n, 0.50) + ",\"p90\":" + ms(s, n, 0.90) + ",\"p99\":" + ms(s, n, 0.99) + ",\"max\":"
                + fmt(s[n - 1] / 1e6) + "}";
    }

    private static String ms(long[] sorted, int n, double q) {
        return fmt(sorted[Math.min(n - 1, (int) Math.ceil(q * n) - 1)] / 1e6);
    }

    private static String fmt(double v) {
        return String.format(Locale.ROOT, "%.2f", v);
    }
}
