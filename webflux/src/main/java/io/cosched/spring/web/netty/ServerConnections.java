package io.cosched.spring.web.netty;

import io.cosched.Internal;
import io.netty.channel.Channel;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

/**
 * The web server's connections as an operator sees them: accepted since start, open now, and, where
 * the kernel says it (Linux's {@code /proc/net/tcp} and {@code tcp6}), the connections completed by the
 * kernel and waiting in the listen queue for the server to accept them, and the host's listen-queue
 * overflows (connections refused because a queue was full: host-wide, every listening socket).
 * A server whose loops are busy accepts late: a growing listen queue is requests waiting before any
 * of cosched's counters can see them. Thread-safe.
 */
@Internal
public final class ServerConnections {

    /** What the kernel cannot tell (not Linux, no {@code /proc}). */
    public static final long UNKNOWN = -1;

    private static final Path TCP = Path.of("/proc/net/tcp");
    private static final Path TCP6 = Path.of("/proc/net/tcp6");
    private static final Path NETSTAT = Path.of("/proc/net/netstat");

    private final LongAdder accepted = new LongAdder();
    private final AtomicInteger open = new AtomicInteger();
    private volatile int port = -1;

    /** Counts {@code child}, a connection the server accepted, until it closes. */
    public void accepted(Channel child) {
        accepted.increment();
        open.incrementAndGet();
        child.closeFuture().addListener(f -> open.decrementAndGet());
    }

    /** The port the server listens on, once it does: what its listen queue is looked up by. */
    public void listening(int port) {
        this.port = port;
    }

    /** Connections accepted since start. */
    public long accepted() {
        return accepted.sum();
    }

    /** Connections open now. */
    public int open() {
        return open.get();
    }

    /** Connections waiting in the server's listen queue now, summed over its listening sockets; {@link #UNKNOWN} where the kernel does not say. */
    public long listenQueue() {
        int p = port;
        if (p < 0) {
            return UNKNOWN;
        }
        long v4 = listenQueue(read(TCP), p);
        long v6 = listenQueue(read(TCP6), p);
        if (v4 == UNKNOWN && v6 == UNKNOWN) {
            return UNKNOWN;
        }
        return Math.max(0, v4) + Math.max(0, v6);
    }

    /** The host's listen-queue overflows since boot (all sockets), {@link #UNKNOWN} where the kernel does not say. */
    public long listenOverflows() {
        return listenOverflows(read(NETSTAT));
    }

    /**
     * The accept queue of the listening sockets on {@code port} in a {@code /proc/net/tcp}-style table:
     * for a socket in state LISTEN ({@code 0A}) the {@code rx_queue} column is its accept backlog.
     */
    static long listenQueue(List<String> table, int port) {
        if (table.isEmpty()) {
            return UNKNOWN;
        }
        String hexPort = ":" + String.format(Locale.ROOT, "%04X", port);
        long sum = 0;
        for (int i = 1; i < table.size(); i++) {
            String[] f = table.get(i).trim().split("\\s+");
            if (f.length > 4 && f[1].endsWith(hexPort) && f[3].equals("0A")) {
                String queues = f[4]; // tx_queue:rx_queue
                sum += Long.parseLong(queues.substring(queues.indexOf(':') + 1), 16);
            }
        }
        return sum;
    }

    /** TcpExt's ListenOverflows in a {@code /proc/net/netstat}-style table (a header line, then a value line). */
    static long listenOverflows(List<String> netstat) {
        for (int i = 0; i + 1 < netstat.size(); i++) {
            String header = netstat.get(i);
            String values = netstat.get(i + 1);
            if (header.startsWith("TcpExt:") && values.startsWith("TcpExt:")) {
                String[] names = header.trim().split("\\s+");
                String[] counts = values.trim().split("\\s+");
                for (int k = 1; k < names.length && k < counts.length; k++) {
                    if (names[k].equals("ListenOverflows")) {
                        return Long.parseLong(counts[k]);
                    }
                }
            }
        }
        return UNKNOWN;
    }

    private static List<String> read(Path file) {
        try {
            return Files.readAllLines(file);
        } catch (IOException | RuntimeException e) {
            return List.of();
        }
    }

    @Override
    public String toString() {
        return "ServerConnections[accepted=" + accepted() + ", open=" + open() + ", port=" + port + "]";
    }
}
