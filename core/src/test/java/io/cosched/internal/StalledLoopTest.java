package io.cosched.internal;

import static io.cosched.TestSupport.eventually;
import static org.assertj.core.api.Assertions.assertThat;

import io.cosched.Coroutines;
import io.cosched.IOManager;
import io.cosched.TestSupport;
import io.cosched.Timer;
import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.EventLoop;
import io.netty.channel.ServerChannel;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * What keeps working while one loop is stuck in a task: new channels go to the other loop, the
 * server keeps accepting, and the stuck loop's due timers fire elsewhere, once.
 */
@Timeout(60)
@Tag("carrier-only") // a spinning coroutine holds our loop only in carrier mode
class StalledLoopTest {

    private static final long MS = 1_000_000L;

    private final AtomicBoolean release = new AtomicBoolean();
    private CoroutineRuntime scheduler;
    private IOManager manager;

    @AfterEach
    void tearDown() {
        release.set(true);
        if (scheduler != null) {
            scheduler.stop(Duration.ofSeconds(10));
        }
        if (manager != null) {
            manager.stop(Duration.ofSeconds(10));
        }
    }

    /** Spins on {@code loop} until released (30 s at most); returns once it spins. */
    private void hog(IORuntime io, int loopIndex) throws InterruptedException {
        CountDownLatch started = new CountDownLatch(1);
        io.spawn((Runnable) () -> spin(started), io.carrier(loopIndex), false);
        assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
    }

    /** {@link #hog} on the public IOManager. */
    private void hog(IOManager io, int loopIndex) throws InterruptedException {
        CountDownLatch started = new CountDownLatch(1);
        io.spawnOn(loopIndex, () -> {
            spin(started);
            return null;
        });
        assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
    }

    /** A CPU hog: counts down {@code started}, then spins without parking until released (30 s at most). */
    private void spin(CountDownLatch started) {
        started.countDown();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!release.get() && System.nanoTime() - deadline < 0) {
            Thread.onSpinWait();
        }
    }

    @Test
    void newChannelsSkipALoopInOneTaskForATenthOfTheThresholdAndComeBackWhenItMoves() throws Exception {
        long[] now = {0};
        IORuntime io =
                new IORuntime(RuntimeSettings.of("choose-io", 2).withStallThresholdNanos(100 * MS), () -> now[0]);
        scheduler = io;
        io.start();
        EventLoop loop0 = io.carrier(0).loop();
        EventLoop loop1 = io.carrier(1).loop();
        hog(io, 0);

        List<EventLoop> chosen = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            chosen.add(io.eventLoopGroup().next()); // seen busy just now: not a suspect yet
        }
        assertThat(chosen).containsExactly(loop0, loop1, loop0, loop1);

        now[0] = 10 * MS; // in the same task for a tenth of the 100 ms threshold
        chosen.clear();
        for (int i = 0; i < 6; i++) {
            chosen.add(io.eventLoopGroup().next());
        }
        assertThat(chosen).containsOnly(loop1);

        release.set(true);
        eventually(Duration.ofSeconds(10), () -> !io.carrier(0).isBusy(), () -> "loop 0 still in the hog");
        chosen.clear();
        for (int i = 0; i < 4; i++) {
            chosen.add(io.eventLoopGroup().next());
        }
        assertThat(chosen).containsOnly(loop0, loop1).contains(loop0);
    }

    @Test
    void whenEveryLoopIsInALongTaskNewChannelsGoToOneNotStalled() throws Exception {
        long[] now = {0};
        IORuntime io = new IORuntime(RuntimeSettings.of("busy-io", 2).withStallThresholdNanos(100 * MS), () -> now[0]);
        scheduler = io;
        io.start();
        hog(io, 0);
        hog(io, 1);
        io.eventLoopGroup().next(); // each loop looked at in its task
        io.eventLoopGroup().next();
        io.carrier(0).stalled = true; // as the watchdog marks it
        now[0] = 50 * MS; // both in one task for half the threshold: neither is free
        List<EventLoop> chosen = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            chosen.add(io.eventLoopGroup().next());
        }
        // a loop busy for a while may be done any moment; the stalled one is stuck until the watchdog sees it move
        assertThat(chosen).containsOnly(io.carrier(1).loop());
    }

    @Test
    void whenEveryLoopIsStuckNewChannelsStillGoRoundRobin() throws Exception {
        long[] now = {0};
        IORuntime io =
                new IORuntime(RuntimeSettings.of("all-stuck-io", 2).withStallThresholdNanos(100 * MS), () -> now[0]);
        scheduler = io;
        io.start();
        hog(io, 0);
        hog(io, 1);
        io.eventLoopGroup().next();
        io.eventLoopGroup().next();
        now[0] = 50 * MS;
        assertThat(List.of(io.eventLoopGroup().next(), io.eventLoopGroup().next()))
                .containsExactlyInAnyOrder(io.carrier(0).loop(), io.carrier(1).loop());
    }

    @Test
    void aServerOnTheAcceptorGroupKeepsAcceptingWhileALoopIsStuckAndItsConnectionsGoToTheOther() throws Exception {
        manager = IOManager.builder()
                .name("accept-io")
                .threads(2)
                .stallThreshold(Duration.ofMillis(100))
                .build();
        manager.start();
        EventLoop acceptor = manager.acceptorGroup().next();
        assertThat(manager.acceptorGroup()).isSameAs(manager.acceptorGroup());
        Map<Channel, String> servedOn = new ConcurrentHashMap<>();
        boolean epoll = manager.transport() == io.cosched.Transport.EPOLL && Epoll.isAvailable();
        Class<? extends ServerChannel> serverType =
                epoll ? EpollServerSocketChannel.class : NioServerSocketChannel.class;
        Channel server = new ServerBootstrap()
                .group(manager.acceptorGroup(), manager.eventLoopGroup())
                .channel(serverType)
                .childHandler(new io.netty.channel.ChannelInitializer<Channel>() {
                    @Override
                    protected void initChannel(Channel ch) {
                        ch.pipeline().addLast(new ChannelInboundHandlerAdapter() {
                            @Override
                            public void channelRead(ChannelHandlerContext ctx, Object msg) {
                                servedOn.put(
                                        ctx.channel(), Thread.currentThread().getName());
                                ctx.writeAndFlush(msg); // echo
                            }
                        });
                    }
                })
                .bind(InetAddress.getLoopbackAddress(), 0)
                .sync()
                .channel();
        try {
            assertThat(server.eventLoop()).isSameAs(acceptor);
            String[] acceptorThread = new String[1];
            acceptor.submit(() -> acceptorThread[0] = Thread.currentThread().getName())
                    .sync();
            assertThat(acceptorThread[0]).isEqualTo("accept-io-acceptor");

            // Hog both loops in turn: whichever it is, connections keep coming in and land on the other.
            for (int stuck = 0; stuck < 2; stuck++) {
                release.set(false);
                hog(manager, stuck);
                int stuckLoop = stuck;
                eventually(
                        Duration.ofSeconds(10),
                        () -> manager.stats().stalledThreads() == 1,
                        () -> "loop " + stuckLoop + " not seen stuck: " + manager.stats());
                servedOn.clear();
                for (int i = 0; i < 6; i++) {
                    assertThat(echo((InetSocketAddress) server.localAddress(), (byte) i))
                            .isEqualTo(i);
                }
                assertThat(servedOn.values()).hasSize(6).containsOnly("accept-io-" + (1 - stuck));
                release.set(true);
                eventually(
                        Duration.ofSeconds(10),
                        () -> manager.stats().stalledThreads() == 0,
                        () -> "loop " + stuckLoop + " still stalled: " + manager.stats());
            }
        } finally {
            server.close().sync();
        }
    }

    /**
     * A look on the test's clock, then time for loop 1 to answer the ping it may have got: the clock
     * jumps tens of milliseconds between looks where real time moves microseconds, and with loop 0
     * spinning on one core loop 1 may not have run yet.
     */
    private static void look(StallWatchdog watchdog, long now, IORuntime io) {
        watchdog.check(now);
        io.netty.util.concurrent.SingleThreadEventExecutor loop1 = (io.netty.util.concurrent.SingleThreadEventExecutor)
                io.carrier(1).loop();
        eventually(Duration.ofSeconds(10), () -> loop1.pendingTasks() == 0, () -> "loop 1 did not answer its ping");
    }

    /** One byte there and back over a new connection from a client group of its own. */
    private static int echo(InetSocketAddress to, byte b) throws Exception {
        io.netty.channel.MultiThreadIoEventLoopGroup client =
                new io.netty.channel.MultiThreadIoEventLoopGroup(1, io.netty.channel.nio.NioIoHandler.newFactory());
        try {
            CompletableFuture<Integer> got = new CompletableFuture<>();
            Channel ch = new Bootstrap()
                    .group(client)
                    .channel(io.netty.channel.socket.nio.NioSocketChannel.class)
                    .handler(new ChannelInboundHandlerAdapter() {
                        @Override
                        public void channelRead(ChannelHandlerContext ctx, Object msg) {
                            ByteBuf buf = (ByteBuf) msg;
                            got.complete((int) buf.readByte());
                            buf.release();
                        }
                    })
                    .connect(to)
                    .sync()
                    .channel();
            ch.writeAndFlush(Unpooled.wrappedBuffer(new byte[] {b}));
            int answer = got.get(5, TimeUnit.SECONDS); // a connection on the stuck loop would wait for the hog
            ch.close().sync();
            return answer;
        } finally {
            client.shutdownGracefully(0, 0, TimeUnit.MILLISECONDS).sync();
        }
    }

    @Test
    void aStalledLoopsDueTimersFireOnceOnAnotherLoopAndACancelledOneNever() throws Exception {
        long[] now = {0};
        IORuntime io = new IORuntime(RuntimeSettings.of("rescue-io", 2).withStallThresholdNanos(0), () -> now[0]);
        scheduler = io;
        io.start();
        StallWatchdog watchdog = io.manualWatchdog(100 * MS, () -> now[0]);
        IOTimerManager timers = io.timers();

        // On loop 0: a coroutine sleeping 50 ms, a task timer due at 80 ms, a cancelled one, a recurring one.
        CompletableFuture<String> sleeperWokeOn = new CompletableFuture<>();
        AtomicInteger taskRuns = new AtomicInteger();
        AtomicInteger cancelledRuns = new AtomicInteger();
        AtomicInteger recurringRuns = new AtomicInteger();
        CompletableFuture<String> taskRanOn = new CompletableFuture<>();
        Timer[] set = new Timer[3];
        io.spawn(
                        (Runnable) () -> {
                            set[0] = timers.addTimer(Duration.ofMillis(80), () -> {
                                taskRuns.incrementAndGet();
                                taskRanOn.complete(Thread.currentThread().getName());
                            });
                            set[1] = timers.addTimer(Duration.ofMillis(60), cancelledRuns::incrementAndGet);
                            set[2] = timers.addRecurringTimer(Duration.ofMillis(30), recurringRuns::incrementAndGet);
                        },
                        io.carrier(0),
                        false)
                .toFuture()
                .get(10, TimeUnit.SECONDS);
        assertThat(set[1].cancel()).isTrue();
        io.spawn(
                (Runnable) () -> {
                    try {
                        Coroutines.sleep(Duration.ofMillis(50));
                        sleeperWokeOn.complete(TestSupport.carrierName());
                    } catch (InterruptedException e) {
                        sleeperWokeOn.completeExceptionally(e);
                    }
                },
                io.carrier(0),
                false);
        eventually(Duration.ofSeconds(10), () -> io.stats().sleeping() == 1, () -> "not asleep: " + io.stats());
        hog(io, 0);

        look(watchdog, now[0], io);
        now[0] = 40 * MS;
        look(watchdog, now[0], io);
        now[0] = 100 * MS;
        watchdog.check(now[0]); // stalled: what is due by now fires elsewhere
        assertThat(io.carrier(1).isStalled()).isFalse();
        assertThat(io.carrier(0).isStalled()).isTrue();
        assertThat(sleeperWokeOn.get(10, TimeUnit.SECONDS)).isEqualTo("rescue-io-1");
        assertThat(taskRanOn.get(10, TimeUnit.SECONDS)).isEqualTo("rescue-io-1");
        eventually(Duration.ofSeconds(10), () -> recurringRuns.get() == 1, () -> "recurring runs: " + recurringRuns);

        now[0] = 129 * MS;
        watchdog.check(now[0]);
        now[0] = 130 * MS; // three periods were missed: one run at 100, then every 30 ms from there
        watchdog.check(now[0]);
        eventually(Duration.ofSeconds(10), () -> recurringRuns.get() == 2, () -> "recurring runs: " + recurringRuns);

        // The loop moves again and runs its own timer work: nothing fires twice.
        release.set(true);
        eventually(Duration.ofSeconds(10), () -> !io.carrier(0).isBusy(), () -> "loop 0 still in the hog");
        eventually(
                Duration.ofSeconds(10),
                () -> {
                    watchdog.check(now[0] += MS); // pings it, then sees the answer
                    return !io.carrier(0).isStalled();
                },
                () -> "loop 0 still seen stalled");
        set[2].cancel();
        io.carrier(0).loop().submit(() -> {}).sync(); // the loop's queued timer work has run
        io.carrier(0).timers.rescue(now[0]); // and no rescue finds anything left to fire
        assertThat(taskRuns.get()).isEqualTo(1);
        assertThat(cancelledRuns.get()).isZero();
        assertThat(recurringRuns.get()).isEqualTo(2);
        assertThat(io.carrier(0).timersPending()).isZero();
    }

    /** Issue 14's rescue on the real clock and the real watchdog thread: a sleep on a stuck loop ends elsewhere. */
    @Test
    void aSleepOnALoopThatGetsStuckEndsOnTheOtherLoopWhileTheHogStillRuns() throws Exception {
        // The real watchdog on the real clock: the hog runs until the sleeper has woken, so the sleeper wakes only
        // if the watchdog moves its timer. How close to its due time is asserted on a manual clock
        // (aStalledLoopsDueTimersFireOnceOnAnotherLoopAndACancelledOneNever); on a shared 2-core host the
        // watchdog's own thread can be off CPU for tens of ms, so here the bound is only "long before the hog ends".
        manager = IOManager.builder()
                .name("late-io")
                .threads(2)
                .stallThreshold(Duration.ofMillis(100))
                .build();
        manager.start();
        CountDownLatch asleep = new CountDownLatch(1);
        io.cosched.Coroutine<String> sleeper = manager.spawnOn(0, () -> {
            long due = System.nanoTime() + 30 * MS;
            asleep.countDown();
            Coroutines.sleep(Duration.ofMillis(30));
            return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - due) + " ms late on " + TestSupport.carrierName();
        });
        assertThat(asleep.await(10, TimeUnit.SECONDS)).isTrue();
        hog(manager, 0);
        String woke = sleeper.toFuture().get(10, TimeUnit.SECONDS);
        release.set(true);
        assertThat(woke).endsWith(" ms late on late-io-1");
        assertThat(Long.parseLong(woke.substring(0, woke.indexOf(' '))))
                .as(woke)
                .isLessThan(1_000);
    }

    @Test
    void aTimerAddedForAStalledLoopFiresAtItsDueTimeNotAtTheNextLook() throws Exception {
        long[] now = {0};
        IORuntime io = new IORuntime(RuntimeSettings.of("late-add-io", 2).withStallThresholdNanos(0), () -> now[0]);
        scheduler = io;
        io.start();
        StallWatchdog watchdog = io.manualWatchdog(100 * MS, () -> now[0]);
        hog(io, 0);
        look(watchdog, now[0], io);
        now[0] = 100 * MS;
        watchdog.check(now[0]);
        assertThat(io.carrier(0).isStalled()).isTrue();
        assertThat(io.carrier(1).isStalled()).isFalse();

        // From another thread: the change goes to the stalled loop's inbox, which the watchdog applies.
        CompletableFuture<String> ranOn = new CompletableFuture<>();
        io.carrier(0)
                .timers
                .add(5 * MS, false, () -> ranOn.complete(Thread.currentThread().getName()), null, null);
        long next = watchdog.check(now[0] += MS);
        assertThat(next).isBetween(102 * MS, 105 * MS); // before the watchdog's own next look at 101 + 12.5 ms
        assertThat(ranOn).isNotDone();
        now[0] = 105 * MS;
        watchdog.check(now[0]);
        assertThat(ranOn.get(10, TimeUnit.SECONDS)).isEqualTo("late-add-io-1");
    }
}
