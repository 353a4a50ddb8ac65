package io.cosched;

import static io.cosched.TestSupport.carrierName;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.util.ReferenceCountUtil;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(120)
class IOManagerTest {

    private IOManager io;

    private IOManager start(int threads) {
        io = IOManager.builder().name("test-io").threads(threads).build();
        io.start();
        return io;
    }

    /** An epoll server on the IOManager's loops, each accepted connection's pipeline {@code child}. */
    private Channel serve(ChannelHandler child) throws InterruptedException {
        return new ServerBootstrap()
                .group(io.eventLoopGroup())
                .channel(EpollServerSocketChannel.class)
                .childHandler(child)
                .bind(InetAddress.getLoopbackAddress(), 0)
                .sync()
                .channel();
    }

    private static Socket connect(Channel server) throws IOException {
        return new Socket(InetAddress.getLoopbackAddress(), ((InetSocketAddress) server.localAddress()).getPort());
    }

    @AfterEach
    void stop() {
        if (io != null) {
            io.stop(Duration.ofSeconds(10));
        }
    }

    @Test
    void usesEpollWhereNettysNativeTransportIsAvailable() {
        start(1);
        assertThat(io.transport()).isEqualTo(Transport.EPOLL);
        assertThat(io.stats().type()).isEqualTo(SchedulerStats.Type.IO);
        // what Netty and Reactor Netty ask a loop, though cosched watches its I/O handler (PollWatch)
        io.netty.channel.IoEventLoop loop =
                (io.netty.channel.IoEventLoop) io.eventLoopGroup().next();
        assertThat(loop.isIoType(io.netty.channel.epoll.EpollIoHandler.class)).isTrue();
        assertThat(loop.isIoType(io.netty.channel.nio.NioIoHandler.class)).isFalse();
    }

    @Test
    @Tag("carrier-only")
    void coroutinesRunOnTheEpollEventLoopThreads() throws Exception {
        start(2);
        String carrier = io.spawn(TestSupport::carrierName).join();
        assertThat(carrier).matches("test-io-[01]");
        // and the carrier really is the loop: a task on that loop runs on the same thread
        String loopThread = io.eventLoopGroup()
                .submit(() -> Thread.currentThread().getName())
                .get();
        assertThat(loopThread).matches("test-io-[01]");
        assertThat(io.spawn(() -> Thread.currentThread().isVirtual()).join()).isTrue();
    }

    @Test
    @Tag("carrier-only")
    void aCoroutineSpawnedFromInsideStaysOnItsParentsLoop() throws Exception {
        start(2);
        for (int loopIndex = 0; loopIndex < 2; loopIndex++) {
            List<String> seen = io.spawnOn(loopIndex, () -> {
                        String parent = carrierName();
                        String child = io.spawn(TestSupport::carrierName).join();
                        String[] viaGo = new String[1];
                        Coroutines.go(() -> viaGo[0] = carrierName()).join();
                        Coroutines.sleep(Duration.ofMillis(1)); // and after parking, back on the same loop
                        return List.of(parent, child, viaGo[0], carrierName());
                    })
                    .join();
            assertThat(seen).containsOnly("test-io-" + loopIndex);
        }
    }

    @Test
    @Tag("carrier-only")
    void aCoroutineSpawnedFromAPlainThreadGoesToTheLoopWithFewestCoroutines() throws Exception {
        start(2);
        CountDownLatch release = new CountDownLatch(1);
        for (int i = 0; i < 3; i++) {
            io.spawnOn(0, () -> {
                release.await();
                return null;
            });
        }
        for (int i = 0; i < 5; i++) {
            assertThat(io.spawn(TestSupport::carrierName).join()).isEqualTo("test-io-1");
        }
        release.countDown();
    }

    @Test
    void hundredThousandCoroutinesSleepingConcurrentlyAllFinishOnTwoLoops() throws Exception {
        start(2);
        int n = 100_000;
        WaitGroup wg = new WaitGroup(n);
        AtomicInteger inFlight = new AtomicInteger();
        AtomicInteger maxInFlight = new AtomicInteger();
        AtomicInteger failures = new AtomicInteger();
        for (int i = 0; i < n; i++) {
            io.execute(() -> {
                maxInFlight.accumulateAndGet(inFlight.incrementAndGet(), Math::max);
                try {
                    Coroutines.sleep(Duration.ofMillis(50));
                } catch (InterruptedException e) {
                    failures.incrementAndGet();
                } finally {
                    inFlight.decrementAndGet();
                    wg.done();
                }
            });
        }
        assertThat(wg.await(Duration.ofSeconds(90))).as("all finished").isTrue();
        assertThat(failures).hasValue(0);
        // two loops, yet tens of thousands asleep at once: they parked instead of holding a thread
        assertThat(maxInFlight.get()).isGreaterThan(10_000);
        TestSupport.eventually(
                Duration.ofSeconds(10),
                () -> io.stats().coroutines() == 0,
                () -> io.stats().toString());
        assertThat(io.stats().completedTasks()).isEqualTo(n);
    }

    @Test
    void spawnOnNamesTheValidRangeOfCarriers() {
        start(2);
        assertThatThrownBy(() -> io.spawnOn(2, () -> null))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("carrier: 2 (expected: 0..1; IOManager 'test-io' has 2 event loops)");
        assertThatThrownBy(() -> io.spawnOn(-1, () -> null)).hasMessageContaining("carrier: -1");
    }

    @Test
    void spawningBeforeStartOrAfterStopIsRejectedWithTheSchedulersState() {
        IOManager fresh = IOManager.builder().name("fresh").threads(1).build();
        assertThatThrownBy(() -> fresh.spawn(() -> 1))
                .isInstanceOf(RejectedExecutionException.class)
                .hasMessage("scheduler 'fresh' is NEW (call start() first)");
        fresh.start();
        assertThat(fresh.stop(Duration.ofSeconds(5))).isTrue();
        assertThatThrownBy(() -> fresh.execute(() -> {}))
                .isInstanceOf(RejectedExecutionException.class)
                .hasMessage("scheduler 'fresh' is STOPPED (it accepts no new coroutines)");
        assertThatThrownBy(fresh::start)
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("cannot be restarted");
    }

    @Test
    void stopWaitsForSleepingCoroutinesToFinish() throws Exception {
        start(2);
        AtomicInteger finished = new AtomicInteger();
        for (int i = 0; i < 100; i++) {
            io.spawn(() -> {
                Coroutines.sleep(Duration.ofMillis(100));
                return finished.incrementAndGet();
            });
        }
        assertThat(io.stop(Duration.ofSeconds(10))).isTrue();
        assertThat(finished).hasValue(100);
        io = null;
    }

    @Test
    void aCoroutineStillParkedWhenStopTimesOutLaterFinishesOnTheJdkScheduler() throws Exception {
        start(1);
        CountDownLatch release = new CountDownLatch(1);
        Coroutine<String> parked = io.spawn(() -> {
            release.await();
            return "finished after stop";
        });
        Coroutine<String> sleeping = io.spawn(() -> {
            Coroutines.sleep(Duration.ofMillis(300)); // its wake-up timer outlives the loop
            return "woke after stop";
        });
        TestSupport.eventually(
                Duration.ofSeconds(5),
                () -> io.stats().sleeping() == 1 && parked.state() != CoroutineState.READY,
                () -> io.stats().toString());
        assertThat(io.stop(Duration.ofMillis(50))).as("not drained").isFalse();
        assertThat(io.stats().coroutines()).isEqualTo(2);
        release.countDown();
        assertThat(parked.toFuture().get(10, TimeUnit.SECONDS)).isEqualTo("finished after stop");
        assertThat(sleeping.toFuture().get(10, TimeUnit.SECONDS)).isEqualTo("woke after stop");
        io = null;
    }

    @Test
    void stopFromInsideTheSchedulerIsRefused() throws Exception {
        start(1);
        Coroutine<Void> inside = io.spawn(() -> {
            io.stop(Duration.ofSeconds(1));
            return null;
        });
        assertThatThrownBy(inside::join)
                .hasCauseInstanceOf(IllegalStateException.class)
                .hasMessageContaining("stop() called from inside scheduler 'test-io'");
    }

    @Test
    void anEpollRequestOnAMachineWithoutItFailsWithATypedExceptionAndAutoFallsBackToNio() throws Exception {
        TestSupport.Forked run = TestSupport.fork(
                NoNativeProgram.class,
                List.of(
                        "-Dio.netty.transport.noNative=true", "--enable-native-access=ALL-UNNAMED",
                        "--add-opens", "java.base/java.lang=ALL-UNNAMED"),
                Duration.ofSeconds(60));
        assertThat(run.exitCode()).as(run.output()).isZero();
        assertThat(run.output())
                .contains(
                        "TransportUnavailableException: transport: EPOLL requested, but Netty's native epoll transport is unavailable")
                .contains("auto=NIO ran=true");
    }

    /** Runs with Netty's native transports disabled. */
    public static final class NoNativeProgram {
        public static void main(String[] args) throws Exception {
            try {
                IOManager.builder().transport(Transport.EPOLL).build();
                System.exit(3);
            } catch (TransportUnavailableException e) {
                System.out.println(e.getClass().getSimpleName() + ": " + e.getMessage());
            }
            try (IOManager io = IOManager.builder().threads(1).build()) {
                io.start();
                System.out.println("auto=" + io.transport() + " ran="
                        + io.spawn(() -> true).join());
            }
        }
    }

    @Test
    void isCurrentTellsWhetherTheCallerRunsOnThisIOManager() throws Exception {
        start(1);
        try (IOManager other = IOManager.builder().name("other").threads(1).build()) {
            other.start();
            assertThat(io.isCurrent()).isFalse();
            assertThat(io.spawn(io::isCurrent).join()).isTrue();
            assertThat(other.spawn(io::isCurrent).join()).isFalse();
            assertThat(io.eventLoopGroup().submit(io::isCurrent).get())
                    .as("on its loop thread")
                    .isTrue();
            // a virtual thread started inside a coroutine shares its scheduler (the JDK hands it down)
            assertThat(io.spawn(() -> {
                                boolean[] inner = new boolean[1];
                                Thread.ofVirtual()
                                        .start(() -> inner[0] = io.isCurrent())
                                        .join();
                                return inner[0];
                            })
                            .join())
                    .isEqualTo(TestSupport.carrierMode());
        }
    }

    @Test
    void stoppingAStoppedIOManagerReturnsAtOnceEvenWithCoroutinesLeftOver() throws Exception {
        start(1);
        CountDownLatch release = new CountDownLatch(1);
        io.spawn(() -> {
            release.await();
            return null;
        });
        TestSupport.eventually(
                Duration.ofSeconds(5),
                () -> io.stats().coroutines() == 1,
                () -> io.stats().toString());
        assertThat(io.stop(Duration.ofMillis(20))).isFalse();
        long t0 = System.nanoTime();
        assertThat(io.stop(Duration.ofSeconds(30))).isFalse();
        assertThat(System.nanoTime() - t0).as("no second wait").isLessThan(TimeUnit.SECONDS.toNanos(5));
        release.countDown();
        io = null;
    }

    @Test
    @Tag("carrier-only")
    void aCoroutineYieldingOnAndOnDelaysASocketReadByAboutOneBatchNotByNettysTaskQuantum() throws Exception {
        start(1);
        AtomicLong yields = new AtomicLong();
        AtomicLong yieldsAtRead = new AtomicLong(-1);
        CountDownLatch accepted = new CountDownLatch(1);
        CountDownLatch read = new CountDownLatch(1);
        Channel server = serve(new ChannelInboundHandlerAdapter() {
            @Override
            public void channelActive(ChannelHandlerContext ctx) {
                accepted.countDown();
            }

            @Override
            public void channelRead(ChannelHandlerContext ctx, Object msg) {
                ReferenceCountUtil.release(msg);
                yieldsAtRead.compareAndSet(-1, yields.get());
                read.countDown();
            }
        });
        try (Socket client = connect(server)) {
            assertThat(accepted.await(30, TimeUnit.SECONDS)).isTrue();
            CountDownLatch striding = new CountDownLatch(1);
            Coroutine<Void> yielder = io.spawn(() -> {
                // yields until the byte is read: every step runnable at once, nothing parked on I/O
                while (read.getCount() > 0) {
                    if (yields.incrementAndGet() == 10_000) {
                        striding.countDown();
                    }
                    Coroutines.yieldNow();
                }
            });
            assertThat(striding.await(30, TimeUnit.SECONDS)).isTrue();
            long before = yields.get();
            client.getOutputStream().write(1);
            client.getOutputStream().flush();
            assertThat(read.await(30, TimeUnit.SECONDS)).isTrue();
            yielder.join();
            // The read waits for the drain's batch of 256 steps, then the loop looks at its sockets. Before
            // the rest of a batch waited for the poll, Netty ran the drain posted again as a task in the same
            // turn, for up to its task quantum of a second: hundreds of thousands of yields ahead of the read.
            // The margin covers this thread being descheduled between reading the count and writing.
            assertThat(yieldsAtRead.get() - before).isLessThan(50_000);
        } finally {
            server.close().sync();
        }
    }

    @Test
    void aChannelTurningReadingOffAndOnAsReactorNettyDoesPerRequestReadsEveryRequest() throws Exception {
        start(1);
        List<String> got = Collections.synchronizedList(new ArrayList<>());
        BlockingQueue<String> reads = new LinkedBlockingQueue<>();
        Channel server = serve(new ChannelInboundHandlerAdapter() {
            @Override
            public void channelRead(ChannelHandlerContext ctx, Object msg) {
                String s = ((ByteBuf) msg).toString(StandardCharsets.US_ASCII);
                ReferenceCountUtil.release(msg);
                // as Reactor Netty's server for a bodiless request: off when it arrives, on once it is read,
                // in the same turn (the epoll_ctl calls that cancel out are never made)
                ctx.channel().config().setAutoRead(false);
                ctx.channel().config().setAutoRead(true);
                if (s.contains("off")) {
                    // and left off past the loop's next polls: the next request waits in the socket until
                    // reading is on again, and is read then
                    ctx.channel().config().setAutoRead(false);
                    ctx.executor().schedule(() -> ctx.channel().config().setAutoRead(true), 50, TimeUnit.MILLISECONDS);
                }
                got.add(s);
                reads.add(s);
            }
        });
        try (Socket client = connect(server)) {
            for (String request : List.of("one", "two", "off", "three", "four")) {
                client.getOutputStream().write(request.getBytes(StandardCharsets.US_ASCII));
                client.getOutputStream().flush();
                assertThat(reads.poll(30, TimeUnit.SECONDS))
                        .as("read after " + got)
                        .isEqualTo(request);
            }
            assertThat(got).containsExactly("one", "two", "off", "three", "four");
        } finally {
            server.close().sync();
        }
    }

    @Test
    void aWriteThatFillsTheSocketResumesOnceThePeerReads() throws Exception {
        start(1);
        int size = 32 << 20;
        CountDownLatch full = new CountDownLatch(1);
        Channel server = serve(new ChannelInboundHandlerAdapter() {
            @Override
            public void channelActive(ChannelHandlerContext ctx) {
                // more than the socket buffers hold: the channel asks epoll to say when it can write again
                // (EPOLLOUT), a change that waits for the loop's poll
                for (int sent = 0; sent < size; sent += 1 << 20) {
                    ctx.write(ctx.alloc().buffer(1 << 20).writeZero(1 << 20));
                }
                ctx.flush();
            }

            @Override
            public void channelWritabilityChanged(ChannelHandlerContext ctx) {
                if (!ctx.channel().isWritable()) {
                    full.countDown();
                }
            }
        });
        try (Socket client = connect(server)) {
            assertThat(full.await(30, TimeUnit.SECONDS))
                    .as("the socket's buffers filled")
                    .isTrue();
            client.setSoTimeout(30_000);
            byte[] buffer = new byte[1 << 16];
            long read = 0;
            for (int n; read < size && (n = client.getInputStream().read(buffer)) > 0; ) {
                read += n;
            }
            assertThat(read).isEqualTo(size);
        } finally {
            server.close().sync();
        }
    }
}
