package io.cosched.net;

import static io.cosched.TestSupport.eventually;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cosched.CarrierStats;
import io.cosched.Coroutine;
import io.cosched.CoroutineState;
import io.cosched.IOManager;
import io.cosched.TestSupport;
import io.cosched.netty.NettyInbox;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.zip.CRC32;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(60)
class LoopSocketTest {

    private static final InetAddress LOCALHOST = InetAddress.getLoopbackAddress();

    private IOManager io;

    @BeforeEach
    void start() {
        io = IOManager.builder()
                .name("sock-io")
                .threads(2)
                .stallThreshold(Duration.ZERO)
                .build(); // see PostgresLoopSocketTest
        io.start();
    }

    @AfterEach
    void stop() {
        io.stop(Duration.ofSeconds(10));
    }

    /** Answers each line with "pong:<line>" after a few milliseconds, so the client really waits. */
    private static Peer pongPeer() throws Exception {
        return new Peer(s -> {
            InputStream in = s.getInputStream();
            OutputStream out = s.getOutputStream();
            String line;
            while ((line = Peer.readLine(in)) != null) {
                Thread.sleep(2);
                out.write(("pong:" + line + "\n").getBytes(StandardCharsets.US_ASCII));
            }
        });
    }

    /**
     * Answers each line only once {@code waiter} is parked ({@code WAITING}, which carrier mode reports
     * after the step has left its carrier), so every reply wakes a parked coroutine: however the
     * coroutine is descheduled, no read finds its answer already there.
     */
    private static Peer pongPeerAnsweringOnlyAParked(AtomicReference<Coroutine<?>> waiter) throws Exception {
        return new Peer(s -> {
            InputStream in = s.getInputStream();
            OutputStream out = s.getOutputStream();
            String line;
            while ((line = Peer.readLine(in)) != null) {
                awaitParked(waiter);
                out.write(("pong:" + line + "\n").getBytes(StandardCharsets.US_ASCII));
            }
        });
    }

    private static void awaitParked(AtomicReference<Coroutine<?>> waiter) {
        eventually(
                Duration.ofSeconds(10),
                () -> waiter.get() != null && waiter.get().state() == CoroutineState.WAITING,
                () -> "the coroutine parked in its read, now "
                        + (waiter.get() == null ? "unborn" : waiter.get().state()));
    }

    private static String exchange(Socket s, String line) throws Exception {
        s.getOutputStream().write((line + "\n").getBytes(StandardCharsets.US_ASCII));
        return Peer.readLine(s.getInputStream());
    }

    @Test
    @Tag("carrier-only")
    void aCoroutineWaitingOnItsLoopsSocketIsResumedByThatLoopThreadAlone() throws Exception {
        AtomicReference<Coroutine<?>> waiter = new AtomicReference<>();
        try (Peer peer = pongPeerAnsweringOnlyAParked(waiter)) {
            long remoteBefore = io.carrierStats().get(1).remoteWakeups();
            long localBefore = io.carrierStats().get(1).localWakeups();
            Coroutine<List<String>> onLoopSocket = io.spawnOn(1, () -> {
                List<String> got = new ArrayList<>();
                try (Socket s = new LoopSocketFactory(io).createSocket(LOCALHOST, peer.port())) {
                    assertThat(((LoopSocket) s).loopIndex()).isEqualTo(1); // the connecting coroutine's loop
                    for (int i = 0; i < 20; i++) {
                        got.add(exchange(s, "ping" + i) + "@" + TestSupport.carrierName());
                    }
                }
                return got;
            });
            waiter.set(onLoopSocket); // the peer answers nothing before it knows whom
            List<String> replies = onLoopSocket.join();
            assertThat(replies)
                    .hasSize(20)
                    .allMatch(r -> r.endsWith("@sock-io-1"))
                    .first()
                    .isEqualTo("pong:ping0@sock-io-1");
            // the connect and 20 replies each parked the coroutine; only loop 1's own thread resumed it
            assertThat(io.carrierStats().get(1).localWakeups() - localBefore).isGreaterThanOrEqualTo(21);
            assertThat(io.carrierStats().get(1).remoteWakeups() - remoteBefore).isZero();

            // the same exchange over a JDK socket: every reply is read by the JDK's poller, which resumes it
            long remoteBeforeJdk = io.carrierStats().get(1).remoteWakeups();
            Coroutine<Void> onJdkSocket = io.spawnOn(1, () -> {
                try (Socket s = new Socket(LOCALHOST, peer.port())) {
                    for (int i = 0; i < 20; i++) {
                        exchange(s, "ping" + i);
                    }
                }
                return null;
            });
            waiter.set(onJdkSocket);
            onJdkSocket.join();
            assertThat(io.carrierStats().get(1).remoteWakeups() - remoteBeforeJdk)
                    .isGreaterThanOrEqualTo(20);
        }
    }

    @Test
    void eachCoroutineConnectsOnItsOwnLoopAndAFactoryArgumentPinsTheLoop() throws Exception {
        try (Peer peer = pongPeer()) {
            for (int loopIndex = 0; loopIndex < 2; loopIndex++) {
                int home = loopIndex;
                int where = io.spawnOn(home, () -> {
                            try (Socket s = new LoopSocketFactory(io).createSocket(LOCALHOST, peer.port())) {
                                assertThat(exchange(s, "x")).isEqualTo("pong:x");
                                return ((LoopSocket) s).loopIndex();
                            }
                        })
                        .join();
                assertThat(where).isEqualTo(home);
            }
            // "name/index" as a driver's socketFactoryArg: every socket on that loop, whoever connects
            int pinned = io.spawnOn(0, () -> {
                        try (Socket s = new LoopSocketFactory("sock-io/1").createSocket(LOCALHOST, peer.port())) {
                            assertThat(exchange(s, "y")).isEqualTo("pong:y");
                            return ((LoopSocket) s).loopIndex();
                        }
                    })
                    .join();
            assertThat(pinned).isEqualTo(1);
        }
    }

    @Test
    void outsideACoroutineTheCallingThreadSimplyBlocks() throws Exception {
        try (Peer peer = pongPeer();
                Socket s = new LoopSocketFactory(io).createSocket(LOCALHOST, peer.port())) {
            assertThat(exchange(s, "plain")).isEqualTo("pong:plain");
            assertThat(s.isConnected()).isTrue();
            assertThat(s.getPort()).isEqualTo(peer.port());
            assertThat(s.getInetAddress()).isEqualTo(LOCALHOST);
            assertThat(s.getLocalPort()).isPositive();
            assertThat(s.toString()).contains("port=" + peer.port()).contains("loop=sock-io-");
        }
    }

    @Test
    @Tag("carrier-only")
    void aReadTimeoutIsALoopTimerAndLeavesTheSocketUsable() throws Exception {
        CountDownLatch send = new CountDownLatch(1);
        try (Peer peer = new Peer(s -> {
            send.await();
            s.getOutputStream().write("late\n".getBytes(StandardCharsets.US_ASCII));
            Peer.readLine(s.getInputStream()); // hold the connection open until the client closes
        })) {
            long remoteBefore = io.carrierStats().get(0).remoteWakeups();
            String got = io.spawnOn(0, () -> {
                        try (Socket s = new LoopSocketFactory(io).createSocket(LOCALHOST, peer.port())) {
                            s.setSoTimeout(50);
                            assertThat(s.getSoTimeout()).isEqualTo(50);
                            assertThatThrownBy(() -> s.getInputStream().read())
                                    .isInstanceOf(SocketTimeoutException.class)
                                    .hasMessage("Read timed out");
                            send.countDown();
                            s.setSoTimeout(10_000);
                            return Peer.readLine(s.getInputStream());
                        }
                    })
                    .join();
            assertThat(got).isEqualTo("late");
            // the timeout was a timer of loop 0, not the JDK's unparker thread
            assertThat(io.carrierStats().get(0).remoteWakeups() - remoteBefore).isZero();
        }
    }

    @Test
    void theDataBeforeThePeersCloseIsReadThenTheEndOfTheStream() throws Exception {
        try (Peer peer = new Peer(s -> s.getOutputStream().write("bye".getBytes(StandardCharsets.US_ASCII)))) {
            byte[] all = io.spawn(() -> {
                        try (Socket s = new LoopSocketFactory(io).createSocket(LOCALHOST, peer.port())) {
                            return s.getInputStream().readAllBytes();
                        }
                    })
                    .join();
            assertThat(new String(all, StandardCharsets.US_ASCII)).isEqualTo("bye");
        }
    }

    @Test
    void shuttingDownTheOutputSendsTheEndOfTheStreamAndTheReplyStillArrives() throws Exception {
        try (Peer peer = new Peer(s -> {
            byte[] got = s.getInputStream().readAllBytes(); // up to the client's shutdownOutput
            s.getOutputStream().write((got.length + "\n").getBytes(StandardCharsets.US_ASCII));
        })) {
            String reply = io.spawn(() -> {
                        try (Socket s = new LoopSocketFactory(io).createSocket(LOCALHOST, peer.port())) {
                            s.getOutputStream().write("abcde".getBytes(StandardCharsets.US_ASCII));
                            s.shutdownOutput();
                            assertThat(s.isOutputShutdown()).isTrue();
                            assertThatThrownBy(() -> s.getOutputStream())
                                    .isInstanceOf(SocketException.class)
                                    .hasMessage("Socket output is shutdown");
                            return Peer.readLine(s.getInputStream());
                        }
                    })
                    .join();
            assertThat(reply).isEqualTo("5");
        }
    }

    @Test
    void closingFromAnotherThreadEndsABlockedReadWithSocketClosed() throws Exception {
        try (Peer peer = new Peer(s -> Peer.readLine(s.getInputStream()))) {
            Socket s = new LoopSocketFactory(io).createSocket(LOCALHOST, peer.port());
            Coroutine<Integer> reader = io.spawn(() -> s.getInputStream().read());
            eventually(
                    Duration.ofSeconds(5),
                    () -> reader.state() == CoroutineState.WAITING
                            || !TestSupport.carrierMode() && io.stats().waiting() == 1,
                    reader::toString);
            s.close();
            assertThatThrownBy(reader::join)
                    .isInstanceOf(ExecutionException.class)
                    .cause()
                    .isInstanceOf(SocketException.class)
                    .hasMessage("Socket closed");
            assertThat(s.isClosed()).isTrue();
        }
    }

    @Test
    void interruptingABlockedReadClosesTheSocketAsAJdkSocketDoes() throws Exception {
        try (Peer peer = new Peer(s -> Peer.readLine(s.getInputStream()))) {
            Socket s = new LoopSocketFactory(io).createSocket(LOCALHOST, peer.port());
            AtomicReference<Throwable> failure = new AtomicReference<>();
            AtomicBoolean stillInterrupted = new AtomicBoolean();
            Thread reader = Thread.ofVirtual().start(() -> {
                try {
                    s.getInputStream().read();
                } catch (Exception e) {
                    failure.set(e);
                    stillInterrupted.set(Thread.currentThread().isInterrupted());
                }
            });
            eventually(Duration.ofSeconds(5), () -> reader.getState() == Thread.State.WAITING, reader::toString);
            reader.interrupt();
            assertThat(reader.join(Duration.ofSeconds(10))).isTrue();
            assertThat(failure.get()).isInstanceOf(SocketException.class).hasMessage("Closed by interrupt");
            assertThat(stillInterrupted.get()).isTrue();
            assertThat(s.isClosed()).isTrue();
        }
    }

    @Test
    void aSlowReaderHoldsTheSenderBackAndGetsEveryByte() throws Exception {
        int size = 8 << 20;
        byte[] data = new byte[size];
        new Random(42).nextBytes(data);
        CRC32 sent = new CRC32();
        sent.update(data);
        try (Peer peer = new Peer(s -> s.getOutputStream().write(data))) {
            AtomicLong maxQueued = new AtomicLong();
            long[] got = io.spawn(() -> {
                        CRC32 crc = new CRC32();
                        long n = 0;
                        try (Socket s = new LoopSocketFactory(io).createSocket(LOCALHOST, peer.port())) {
                            InputStream in = s.getInputStream();
                            byte[] buf = new byte[4096];
                            int r;
                            while ((r = in.read(buf)) >= 0) {
                                crc.update(buf, 0, r);
                                n += r;
                                maxQueued.accumulateAndGet(
                                        ((LoopSocket) s).inbox().queuedBytes(), Math::max);
                                if (n % (1 << 20) < 4096) {
                                    Thread.sleep(20); // slow: the loop must stop reading meanwhile
                                }
                            }
                        }
                        return new long[] {n, crc.getValue()};
                    })
                    .join();
            assertThat(got[0]).isEqualTo(size);
            assertThat(got[1]).isEqualTo(sent.getValue());
            // Reading stops above the high water mark. Netty finishes the batch of reads it is in (up to
            // 16 of up to 64 KiB), and a reader on another thread may switch reading on again meanwhile;
            // without flow control the whole 8 MiB would be queued during the reader's sleeps.
            assertThat(maxQueued.get()).isLessThanOrEqualTo(NettyInbox.DEFAULT_HIGH_WATER + (2 << 20));
        }
    }

    @Test
    void aRefusedConnectionIsAConnectException() throws Exception {
        int closedPort;
        try (ServerSocket probe = new ServerSocket(0, 1, LOCALHOST)) {
            closedPort = probe.getLocalPort();
        }
        assertThatThrownBy(() -> io.spawn(() -> new LoopSocketFactory(io).createSocket(LOCALHOST, closedPort))
                        .join())
                .cause()
                .isInstanceOf(ConnectException.class)
                .hasMessageContaining("Connection refused");
    }

    @Test
    void aConnectTimeoutIsASocketTimeoutException() throws Exception {
        // a listener that never accepts, with its backlog filled: the kernel drops further SYNs
        try (ServerSocket full = new ServerSocket(0, 1, LOCALHOST)) {
            List<Socket> fill = new ArrayList<>();
            try {
                for (int i = 0; i < 2; i++) {
                    Socket s = new Socket();
                    s.connect(new InetSocketAddress(LOCALHOST, full.getLocalPort()), 1000);
                    fill.add(s);
                }
                assertThatThrownBy(() -> io.spawn(() -> {
                                    Socket s = new LoopSocketFactory(io).createSocket();
                                    s.connect(new InetSocketAddress(LOCALHOST, full.getLocalPort()), 200);
                                    return s;
                                })
                                .join())
                        .cause()
                        .isInstanceOf(SocketTimeoutException.class)
                        .hasMessage("Connect timed out");
            } finally {
                for (Socket s : fill) {
                    s.close();
                }
            }
        }
    }

    @Test
    void aBlockingReadOnTheSocketsOwnLoopThreadFailsInsteadOfHangingForever() throws Exception {
        try (Peer peer = pongPeer();
                Socket s = new LoopSocketFactory(io, 0).createSocket(LOCALHOST, peer.port())) {
            var onLoop = io.eventLoop(0).submit(() -> s.getInputStream().read());
            assertThatThrownBy(() -> onLoop.get(10, TimeUnit.SECONDS))
                    .cause()
                    .isInstanceOf(SocketException.class)
                    .hasMessageContaining("its own event loop thread sock-io-0");
        }
    }

    @Test
    void aLoopThreadOutsideAnyCoroutineGetsAClearErrorWhateverTheNumberOfLoops() throws Exception {
        assertThatThrownBy(() -> io.eventLoop(0).submit(io::loopIndexForCaller).get(10, TimeUnit.SECONDS))
                .cause()
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("outside any coroutine")
                .hasMessageContaining("two loops doing so on each other's connections")
                .hasMessageContaining("Run the caller as a coroutine");
        assertThat(io.spawnOn(1, io::loopIndexForCaller).join())
                .as("a coroutine: its own loop")
                .isEqualTo(1);
        try (IOManager single = IOManager.builder().name("single-io").threads(1).build()) {
            single.start();
            assertThatThrownBy(() -> single.eventLoop(0)
                            .submit(single::loopIndexForCaller)
                            .get(10, TimeUnit.SECONDS))
                    .cause()
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("event loop thread 'single-io-0' outside any coroutine");
        }
    }

    @Test
    void currentLoopIsTheCoroutinesHomeOrTheLoopThreadsOwnAndMinusOneElsewhere() throws Exception {
        assertThat(io.spawnOn(1, io::currentLoopIndex).join()).isEqualTo(1);
        if (TestSupport.carrierMode()) { // a virtual thread a coroutine started runs on its carrier and counts as its
            assertThat(io.spawnOn(0, () -> {
                                int[] seen = new int[1];
                                Thread v = Thread.ofVirtual().start(() -> seen[0] = io.currentLoopIndex());
                                v.join();
                                return seen[0];
                            })
                            .join())
                    .isEqualTo(0);
        }
        assertThat(io.eventLoop(1).submit(io::currentLoopIndex).get(10, TimeUnit.SECONDS))
                .as("the loop thread's own")
                .isEqualTo(1);
        assertThat(io.currentLoopIndex()).as("a plain thread").isEqualTo(-1);
        try (IOManager other = IOManager.builder().name("other-io").threads(1).build()) {
            other.start();
            assertThat(other.spawn(io::currentLoopIndex).join())
                    .as("a coroutine of another IOManager")
                    .isEqualTo(-1);
            assertThat(other.eventLoop(0).submit(io::currentLoopIndex).get(10, TimeUnit.SECONDS))
                    .isEqualTo(-1);
        }
    }

    /**
     * The handshake and the first exchange are left out of the count: there the JDK's TLS code on
     * both sides takes locks the peer's thread shares (the native secure random's among them), and
     * a coroutine that waited on a monitor the peer's thread released is resumed through another
     * thread: a remote wakeup that is no I/O. After them only the sockets' own bytes wake it.
     */
    @Test
    @Tag("carrier-only")
    void tlsLayeredOverALoopSocketStaysOnTheLoop() throws Exception {
        TestTls tls = TestTls.create();
        AtomicReference<Coroutine<?>> waiter = new AtomicReference<>();
        try (Peer peer = new Peer(
                s -> {
                    InputStream in = s.getInputStream();
                    String line;
                    while ((line = Peer.readLine(in)) != null) {
                        awaitParked(waiter);
                        s.getOutputStream().write(("tls:" + line + "\n").getBytes(StandardCharsets.US_ASCII));
                    }
                },
                tls.server.getServerSocketFactory())) {
            Coroutine<long[]> exchanges = io.spawnOn(0, () -> {
                Socket plain = new LoopSocketFactory(io).createSocket(LOCALHOST, peer.port());
                try (SSLSocket s =
                        (SSLSocket) tls.client.getSocketFactory().createSocket(plain, "localhost", peer.port(), true)) {
                    s.setUseClientMode(true);
                    s.startHandshake();
                    assertThat(exchange(s, "one")).isEqualTo("tls:one");
                    CarrierStats before = io.carrierStats().get(0);
                    for (int i = 0; i < 10; i++) {
                        assertThat(exchange(s, "x" + i)).isEqualTo("tls:x" + i);
                    }
                    CarrierStats after = io.carrierStats().get(0);
                    return new long[] {
                        after.localWakeups() - before.localWakeups(), after.remoteWakeups() - before.remoteWakeups()
                    };
                }
            });
            waiter.set(exchanges); // the peer answers nothing before it knows whom
            long[] wakeups = exchanges.join();
            // each reply was read while the coroutine was parked, and loop 0's own thread resumed it
            assertThat(wakeups[0]).as("local wakeups").isGreaterThanOrEqualTo(10);
            assertThat(wakeups[1]).as("remote wakeups").isZero();
        }
    }

    @Test
    void optionsSetBeforeConnectingApplyToTheConnection() throws Exception {
        try (Peer peer = pongPeer();
                Socket s = new LoopSocketFactory(io).createSocket()) {
            s.setTcpNoDelay(true);
            s.setOption(java.net.StandardSocketOptions.SO_KEEPALIVE, true);
            assertThat(s.getSoLinger()).isEqualTo(-1);
            s.connect(new InetSocketAddress(LOCALHOST, peer.port()), 5000);
            assertThat(s.getTcpNoDelay()).isTrue();
            assertThat(s.getOption(java.net.StandardSocketOptions.SO_KEEPALIVE)).isTrue();
            s.setOption(java.net.StandardSocketOptions.SO_LINGER, 5);
            assertThat(s.getSoLinger()).isEqualTo(5);
            assertThat(s.getReceiveBufferSize()).isPositive(); // the kernel's, once connected
            assertThat(s.supportedOptions()).contains(java.net.StandardSocketOptions.IP_TOS);
            assertThatThrownBy(() -> s.setOption(java.net.StandardSocketOptions.SO_BROADCAST, true))
                    .isInstanceOf(UnsupportedOperationException.class);
            assertThat(exchange(s, "opts")).isEqualTo("pong:opts");
        }
    }

    @Test
    void theFactoryArgumentNamesTheIOManagerAndOptionallyTheLoop() throws Exception {
        assertThatThrownBy(() -> new LoopSocketFactory("sock-io/x"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage(
                        "socketFactoryArg: 'sock-io/x' (expected: <IOManager name> or <IOManager name>/<loop index>, "
                                + "e.g. cosched-io/0)");
        assertThatThrownBy(() -> new LoopSocketFactory("nope/0").createSocket())
                .isInstanceOf(SocketException.class)
                .hasMessageContaining("no running IOManager named 'nope'");
        assertThatThrownBy(() -> new LoopSocketFactory(io, 2))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("loopIndex: 2 (expected: -1 for the caller's loop, or 0..1)");
        assertThat(new LoopSocketFactory("sock-io").createSocket().isConnected())
                .isFalse();
    }

    @Test
    void ofTwoRunningIOManagersOfOneNameTheArgumentFindsTheOneItWasMadeFor() throws Exception {
        // started after the test's own, with a loop the test's own (two loops) does not have
        IOManager twin = IOManager.builder().name("sock-io").threads(3).build();
        twin.start();
        try (Peer peer = pongPeer()) {
            String arg = LoopSocketFactory.argument(twin, 2);
            assertThat(arg).matches("sock-io#\\d+/2");
            assertThat(IOManager.running("sock-io")).containsSame(io);
            assertThat(IOManager.running(arg.substring(0, arg.indexOf('/')))).containsSame(twin);
            try (Socket s = new LoopSocketFactory(arg).createSocket(LOCALHOST, peer.port())) {
                assertThat(exchange(s, "twin")).isEqualTo("pong:twin");
            }
            assertThatThrownBy(() -> new LoopSocketFactory("sock-io/2").createSocket(LOCALHOST, peer.port()))
                    .as("by name: the first started, which has no loop 2")
                    .isInstanceOf(Exception.class);
        } finally {
            twin.stop(java.time.Duration.ofSeconds(10));
        }
    }
}
