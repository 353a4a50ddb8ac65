package io.cosched.redis;

import static io.cosched.TestSupport.eventually;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.cosched.IOManager;
import io.cosched.TestSupport;
import io.cosched.Transport;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;
import io.lettuce.core.resource.Transports;
import java.time.Duration;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Lettuce on an IOManager's loops, without Spring, against {@link RespStub}. */
@Timeout(60)
public class LoopEventLoopGroupProviderTest {

    private IOManager io;
    private RespStub stub;
    private ClientResources base;

    @BeforeEach
    void start() throws Exception {
        io = IOManager.builder()
                .name("redis-io")
                .threads(2)
                .stallThreshold(Duration.ZERO)
                .build();
        io.start();
        stub = new RespStub();
        base = DefaultClientResources.create();
    }

    @AfterEach
    void stop() throws Exception {
        base.shutdown(0, 2, TimeUnit.SECONDS).get(10, TimeUnit.SECONDS);
        stub.close();
        io.stop(Duration.ofSeconds(10));
    }

    private RedisURI uri() {
        return RedisURI.create("redis://127.0.0.1:" + stub.port());
    }

    private String loopThread(int index) throws Exception {
        return io.eventLoop(index)
                .submit(() -> Thread.currentThread().getName())
                .get(10, TimeUnit.SECONDS);
    }

    /** The name of the thread that completes a reply on {@code c}. */
    private static String completer(StatefulRedisConnection<String, String> c) throws Exception {
        return replyThread(c);
    }

    /**
     * The name of the thread that completes a reply on {@code c}: the callback is in place before the command is
     * flushed, so it cannot run on the caller because the reply came first.
     */
    public static String replyThread(StatefulRedisConnection<?, ?> c) throws Exception {
        c.setAutoFlushCommands(false);
        try {
            java.util.concurrent.CompletableFuture<String> thread = c.async()
                    .ping()
                    .thenApply(x -> Thread.currentThread().getName())
                    .toCompletableFuture();
            c.flushCommands();
            return thread.get(10, TimeUnit.SECONDS);
        } finally {
            c.setAutoFlushCommands(true);
        }
    }

    @Test
    void aClientOnLoopOneReadsEveryReplyThereAndItsCoroutinesAreResumedByThatLoop() throws Exception {
        ClientResources onLoop = LoopEventLoopGroupProvider.resourcesOnLoop(base, io, 1);
        RedisClient client = RedisClient.create(onLoop, uri());
        try (StatefulRedisConnection<String, String> c = client.connect()) { // from a plain thread: still loop 1
            assertThat(completer(c)).isEqualTo(loopThread(1));
            c.sync().set("k", "v");
            long remote = io.carrierStats().get(1).remoteWakeups();
            long local = io.carrierStats().get(1).localWakeups();
            String got = io.spawnOn(1, () -> {
                        String v = null;
                        for (int i = 0; i < 20; i++) {
                            v = c.sync().get("k");
                        }
                        return v;
                    })
                    .join();
            assertThat(got).isEqualTo("v");
            if (TestSupport.carrierMode()) {
                assertThat(io.carrierStats().get(1).localWakeups() - local).isGreaterThanOrEqualTo(20);
                assertThat(io.carrierStats().get(1).remoteWakeups() - remote).isZero();
            }
        } finally {
            client.shutdown();
            onLoop.shutdown().get(10, TimeUnit.SECONDS);
        }
        // what the loop's resources shared stays the base's, running
        assertThat(base.eventExecutorGroup().isShuttingDown()).isFalse();
        assertThat(base.eventExecutorGroup().submit(() -> "runs").get(10, TimeUnit.SECONDS))
                .isEqualTo("runs");
        assertThat(io.spawnOn(1, () -> "still running").join()).isEqualTo("still running");
    }

    @Test
    void aDroppedConnectionReconnectsOnTheSameLoop() throws Exception {
        ClientResources onLoop = LoopEventLoopGroupProvider.resourcesOnLoop(base, io, 1);
        RedisClient client = RedisClient.create(onLoop, uri());
        try (StatefulRedisConnection<String, String> c = client.connect()) {
            assertThat(c.sync().incr("n")).isEqualTo(1);
            stub.dropClients();
            // Lettuce's watchdog reconnects from its own threads; the new channel is on the loop all the same
            eventually(Duration.ofSeconds(20), () -> stub.connections() >= 2 && c.isOpen(), () -> "not reconnected");
            assertThat(io.spawnOn(1, () -> c.sync().incr("n")).join()).isEqualTo(2);
            assertThat(completer(c)).isEqualTo(loopThread(1));
        } finally {
            client.shutdown();
            onLoop.shutdown().get(10, TimeUnit.SECONDS);
        }
    }

    @Test
    void allLoopsPlaceNewConnectionsOnEachLoopInTurn() throws Exception {
        ClientResources resources = DefaultClientResources.builder()
                .eventLoopGroupProvider(LoopEventLoopGroupProvider.allLoops(io))
                .build();
        RedisClient client = RedisClient.create(resources, uri());
        try (StatefulRedisConnection<String, String> a = client.connect();
                StatefulRedisConnection<String, String> b = client.connect()) {
            Set<String> threads = new HashSet<>(Set.of(completer(a), completer(b)));
            assertThat(threads).containsExactlyInAnyOrder(loopThread(0), loopThread(1));
        } finally {
            client.shutdown();
            resources.shutdown().get(10, TimeUnit.SECONDS);
        }
        // the client and its resources released the loops: they are cosched's and go on
        assertThat(io.spawnOn(0, () -> "still running").join()).isEqualTo("still running");
        assertThat(io.eventLoopGroup().isShuttingDown()).isFalse();
    }

    @Test
    void theApplicationsNettyCustomizerStillRunsAndTheLoopsFlushesGoOutTogether() throws Exception {
        java.util.List<io.netty.channel.Channel> seen = new java.util.concurrent.CopyOnWriteArrayList<>();
        ClientResources custom = DefaultClientResources.builder()
                .nettyCustomizer(new io.lettuce.core.resource.NettyCustomizer() {
                    @Override
                    public void afterChannelInitialized(io.netty.channel.Channel channel) {
                        seen.add(channel);
                    }
                })
                .build();
        ClientResources onLoop = LoopEventLoopGroupProvider.resourcesOnLoop(custom, io, 0);
        RedisClient client = RedisClient.create(onLoop, uri());
        try (StatefulRedisConnection<String, String> c = client.connect()) {
            assertThat(c.sync().ping()).isEqualTo("PONG");
            assertThat(seen).hasSize(1);
            assertThat(seen.get(0).eventLoop()).isSameAs(io.eventLoop(0));
            assertThat(seen.get(0).pipeline().get("cosched.flush"))
                    .isInstanceOf(io.netty.handler.flush.FlushConsolidationHandler.class);
            // many commands of one loop turn, all answered in order
            java.util.List<io.lettuce.core.RedisFuture<Long>> replies = io.eventLoop(0)
                    .submit(() -> {
                        java.util.List<io.lettuce.core.RedisFuture<Long>> r = new java.util.ArrayList<>();
                        for (int i = 0; i < 50; i++) {
                            r.add(c.async().incr("many"));
                        }
                        return r;
                    })
                    .get(10, TimeUnit.SECONDS);
            for (int i = 0; i < 50; i++) {
                assertThat(replies.get(i).get(10, TimeUnit.SECONDS)).isEqualTo(i + 1);
            }
        } finally {
            client.shutdown();
            onLoop.shutdown().get(10, TimeUnit.SECONDS);
            custom.shutdown().get(10, TimeUnit.SECONDS);
        }
    }

    @Test
    void anIndexOutsideTheLoopsIsRefusedNamingTheRange() {
        assertThatThrownBy(() -> LoopEventLoopGroupProvider.loop(io, 2))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("index: 2 (expected: 0 to 1, the loops of IOManager 'redis-io')");
    }

    @Test
    void loopsOfAnotherTransportThanLettucesAreRefusedWithTheReason() {
        assumeTrue(
                Transports.socketChannelClass().getSimpleName().equals("EpollSocketChannel"),
                "Lettuce does not use epoll here");
        IOManager nio = IOManager.builder()
                .name("nio-io")
                .threads(1)
                .transport(Transport.NIO)
                .build();
        assertThatThrownBy(() -> LoopEventLoopGroupProvider.allLoops(nio))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("io: Lettuce uses io.netty.channel.epoll.EpollSocketChannel but IOManager "
                        + "'nio-io' runs NIO loops");
    }
}
