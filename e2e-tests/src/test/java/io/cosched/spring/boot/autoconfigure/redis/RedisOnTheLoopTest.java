package io.cosched.spring.boot.autoconfigure.redis;

import static io.cosched.TestSupport.carrierMode;
import static io.cosched.TestSupport.eventually;
import static io.cosched.spring.boot.autoconfigure.redis.RedisThreads.loopThread;
import static io.cosched.spring.boot.autoconfigure.redis.RedisThreads.replyThread;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.cosched.Coroutine;
import io.cosched.CoroutineState;
import io.cosched.IOManager;
import io.cosched.spring.boot.autoconfigure.CoschedAutoConfiguration;
import io.cosched.spring.boot.autoconfigure.LoadUnderFault;
import io.cosched.spring.data.redis.LoopLettuceConnectionFactory;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisException;
import io.lettuce.core.RedisURI;
import io.lettuce.core.sentinel.api.StatefulRedisSentinelConnection;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.data.redis.autoconfigure.DataRedisReactiveAutoConfiguration;
import org.springframework.boot.data.redis.autoconfigure.LettuceClientConfigurationBuilderCustomizer;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.dao.DataAccessException;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.ReactiveStringRedisTemplate;
import org.springframework.data.redis.core.RedisCallback;
import org.springframework.data.redis.core.RedisOperations;
import org.springframework.data.redis.core.SessionCallback;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.listener.ChannelTopic;
import org.springframework.data.redis.listener.RedisMessageListenerContainer;

/**
 * Spring Boot's Redis (Spring Data Redis, Lettuce) on cosched's loops, against the real Redis {@code .ci/run}
 * starts ({@code .ci/redis.sh}); skipped with the reason where none is configured (cosched-redis's own tests run
 * the same paths against a stand-in without it).
 */
@Timeout(120)
class RedisOnTheLoopTest {

    private static final String URL = System.getenv("COSCHED_TEST_REDIS_URL");
    private static final String TLS_URL = System.getenv("COSCHED_TEST_REDIS_TLS_URL");
    private static final String RESTART = System.getenv("COSCHED_TEST_REDIS_RESTART");
    private static final String SENTINEL = System.getenv("COSCHED_TEST_REDIS_SENTINEL");
    private static final String FAILOVER_MASTER = System.getenv("COSCHED_TEST_REDIS_FAILOVER_MASTER");

    private ApplicationContextRunner runner;

    @BeforeEach
    void needsServer() {
        assumeTrue(
                URL != null,
                "no Redis: COSCHED_TEST_REDIS_URL is not set (.ci/run starts one on loopback and sets it)");
        runner = new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(
                        CoschedAutoConfiguration.class,
                        CoschedRedisAutoConfiguration.class,
                        DataRedisAutoConfiguration.class,
                        DataRedisReactiveAutoConfiguration.class))
                .withPropertyValues(
                        "spring.data.redis.url=" + URL, "cosched.io.threads=2", "cosched.stall.threshold=0");
    }

    private static void assertStayedLocal(
            IOManager io, int loopIndex, long remoteBefore, long localBefore, int atLeast) {
        if (carrierMode()) {
            assertThat(io.carrierStats().get(loopIndex).localWakeups() - localBefore)
                    .as("loop %d", loopIndex)
                    .isGreaterThanOrEqualTo(atLeast);
            assertThat(io.carrierStats().get(loopIndex).remoteWakeups() - remoteBefore)
                    .as("loop %d", loopIndex)
                    .isZero();
        }
    }

    /**
     * On each of the two loops: a coroutine's reply is completed by that loop's thread, and 30 SETs and GETs
     * under {@code key} from a coroutine there resume it locally only (60 local wake-ups at least, no remote one).
     */
    private void assertEachLoopAnswersItsOwnCoroutines(IOManager io, StringRedisTemplate template, String key)
            throws Exception {
        for (int loopIndex = 0; loopIndex < 2; loopIndex++) {
            int home = loopIndex;
            assertThat(io.spawnOn(home, () -> replyThread(template)).join()).isEqualTo(loopThread(io, home));
            long remote = io.carrierStats().get(home).remoteWakeups();
            long local = io.carrierStats().get(home).localWakeups();
            String last = io.spawnOn(home, () -> {
                        String v = null;
                        for (int i = 0; i < 30; i++) {
                            template.opsForValue().set(key + home, "v" + i);
                            v = template.opsForValue().get(key + home);
                        }
                        return v;
                    })
                    .join();
            assertThat(last).isEqualTo("v29");
            assertStayedLocal(io, home, remote, local, 60);
        }
    }

    @Test
    void springBootsFactoryGoesOnTheLoopsAndACoroutinesCommandsAreResumedByItsOwnLoop() {
        runner.run(context -> {
            assertThat(context.getBean(RedisConnectionFactory.class)).isInstanceOf(LoopLettuceConnectionFactory.class);
            IOManager io = context.getBean(IOManager.class);
            StringRedisTemplate template = context.getBean(StringRedisTemplate.class);
            assertEachLoopAnswersItsOwnCoroutines(io, template, "cosched:k");
            // outside any coroutine: the factory's own connection, read by Lettuce's threads
            assertThat(replyThread(template)).isNotIn(loopThread(io, 0), loopThread(io, 1));
        });
    }

    /**
     * Spring Boot's Sentinel configuration ({@code spring.data.redis.sentinel.*}): the factory asks the Sentinel
     * where master "cosched" is, and each loop's connection to that master answers on its loop.
     */
    @Test
    void aSentinelConfigurationFindsTheMasterAndItsAnswersResumeOnTheirLoops() {
        assumeTrue(
                SENTINEL != null,
                "no Redis Sentinel: COSCHED_TEST_REDIS_SENTINEL is not set (.ci/redis.sh starts one); "
                        + "the standalone tests here run the same loop path");
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(
                        CoschedAutoConfiguration.class,
                        CoschedRedisAutoConfiguration.class,
                        DataRedisAutoConfiguration.class))
                .withPropertyValues(
                        "spring.data.redis.sentinel.master=cosched",
                        "spring.data.redis.sentinel.nodes=" + SENTINEL,
                        "spring.data.redis.password=cosched",
                        "cosched.io.threads=2",
                        "cosched.stall.threshold=0")
                .run(context -> {
                    LoopLettuceConnectionFactory factory = context.getBean(LoopLettuceConnectionFactory.class);
                    assertThat(factory.getSentinelConfiguration()).isNotNull();
                    assertThat(factory.getSentinelConfiguration().getMaster().getName())
                            .isEqualTo("cosched");
                    IOManager io = context.getBean(IOManager.class);
                    assertEachLoopAnswersItsOwnCoroutines(
                            io, context.getBean(StringRedisTemplate.class), "cosched:sentinel");
                });
    }

    /**
     * Spring's test framework pauses a cached context and restarts it: the factory stops and starts with
     * it (it is a lifecycle bean), and the loops' connections come back on their loops.
     */
    @Test
    void afterAContextPauseAndRestartTheLoopsConnectionsAnswerOnTheirLoopsAgain() {
        runner.run(context -> {
            IOManager io = context.getBean(IOManager.class);
            StringRedisTemplate template = context.getBean(StringRedisTemplate.class);
            io.spawnOn(0, () -> template.opsForValue().get("cosched:pause")).join();
            LoopLettuceConnectionFactory factory = context.getBean(LoopLettuceConnectionFactory.class);
            context.pause();
            assertThat(factory.isRunning())
                    .as("the factory paused with the context")
                    .isFalse();
            context.restart();
            assertThat(factory.isRunning()).isTrue();
            assertEachLoopAnswersItsOwnCoroutines(io, template, "cosched:pause");
        });
    }

    @Test
    void transactionsAndPipelinesRunOnTheCallersLoop() {
        runner.run(context -> {
            IOManager io = context.getBean(IOManager.class);
            StringRedisTemplate template = context.getBean(StringRedisTemplate.class);
            template.delete("cosched:tx");
            io.spawnOn(1, () -> transaction(template)).join(); // the dedicated connection opens
            // and the pipeline's: a connection's opening may be completed by one of Lettuce's threads (a remote
            // wake-up, one in some CI runs), which is not what this test is about
            io.spawnOn(
                            1,
                            () -> template.executePipelined((RedisCallback<Object>) c -> {
                                c.stringCommands().get("cosched:tx".getBytes(StandardCharsets.UTF_8));
                                return null;
                            }))
                    .join();
            long remote = io.carrierStats().get(1).remoteWakeups();
            long local = io.carrierStats().get(1).localWakeups();
            List<Object> tx = io.spawnOn(1, () -> transaction(template)).join();
            assertThat(tx).containsExactly(3L, 4L);
            List<Object> pipelined = io.spawnOn(
                            1,
                            () -> template.executePipelined((RedisCallback<Object>) c -> {
                                for (int i = 0; i < 5; i++) {
                                    c.stringCommands().incr("cosched:tx".getBytes(StandardCharsets.UTF_8));
                                }
                                return null;
                            }))
                    .join();
            assertThat(pipelined).containsExactly(5L, 6L, 7L, 8L, 9L);
            assertStayedLocal(io, 1, remote, local, 2);
        });
    }

    private static List<Object> transaction(StringRedisTemplate template) {
        return template.execute(new SessionCallback<List<Object>>() {
            @Override
            @SuppressWarnings("unchecked")
            public <K, V> List<Object> execute(RedisOperations<K, V> operations) {
                StringRedisTemplate t = (StringRedisTemplate) (RedisOperations<?, ?>) operations;
                t.multi();
                t.opsForValue().increment("cosched:tx");
                t.opsForValue().increment("cosched:tx");
                return t.exec();
            }
        });
    }

    @Test
    void aBlockingPopWaitsOnItsOwnConnectionAndAnotherLoopsPushEndsIt() {
        runner.run(context -> {
            IOManager io = context.getBean(IOManager.class);
            StringRedisTemplate template = context.getBean(StringRedisTemplate.class);
            template.delete("cosched:list");
            CountDownLatch popping = new CountDownLatch(1);
            Coroutine<String> pop = io.spawnOn(0, () -> {
                popping.countDown();
                return template.opsForList().leftPop("cosched:list", Duration.ofSeconds(30));
            });
            assertThat(popping.await(10, TimeUnit.SECONDS)).isTrue();
            eventually(Duration.ofSeconds(10), () -> pop.state() == CoroutineState.WAITING, pop::toString);
            // the shared connection of loop 0 is not held by the pop: another coroutine of loop 0 gets answers
            assertThat(io.spawnOn(0, () -> template.opsForValue().increment("cosched:other"))
                            .join())
                    .isPositive();
            io.spawnOn(1, () -> template.opsForList().rightPush("cosched:list", "pushed"))
                    .join();
            assertThat(pop.toFuture().get(30, TimeUnit.SECONDS)).isEqualTo("pushed");
        });
    }

    @Test
    void publishedMessagesReachAListenerContainerAndReactiveUseWorksAsBefore() {
        runner.run(context -> {
            IOManager io = context.getBean(IOManager.class);
            RedisConnectionFactory factory = context.getBean(RedisConnectionFactory.class);
            BlockingQueue<String> received = new LinkedBlockingQueue<>();
            RedisMessageListenerContainer container = new RedisMessageListenerContainer();
            container.setConnectionFactory(factory);
            container.addMessageListener(
                    (message, pattern) -> received.add(new String(message.getBody(), StandardCharsets.UTF_8)),
                    new ChannelTopic("cosched:news"));
            container.afterPropertiesSet();
            container.start();
            try {
                StringRedisTemplate template = context.getBean(StringRedisTemplate.class);
                String first = null;
                for (int i = 0; i < 50 && first == null; i++) { // until the subscription is in place
                    int n = i;
                    io.spawnOn(1, () -> template.convertAndSend("cosched:news", "hello " + n))
                            .join();
                    first = received.poll(100, TimeUnit.MILLISECONDS);
                }
                assertThat(first).startsWith("hello ");
            } finally {
                container.stop();
                container.destroy();
            }
            ReactiveStringRedisTemplate reactive = context.getBean(ReactiveStringRedisTemplate.class);
            assertThat(reactive.opsForValue()
                            .set("cosched:reactive", "yes")
                            .then(reactive.opsForValue().get("cosched:reactive"))
                            .block(Duration.ofSeconds(10)))
                    .isEqualTo("yes");
        });
    }

    @Test
    void tlsConnectionsLiveOnTheLoopsToo() {
        assumeTrue(
                TLS_URL != null,
                "no TLS port: COSCHED_TEST_REDIS_TLS_URL is not set (.ci/redis.sh sets it when openssl is there)");
        runner.withPropertyValues("spring.data.redis.url=" + TLS_URL)
                .withBean(
                        LettuceClientConfigurationBuilderCustomizer.class,
                        () -> b -> b.useSsl().disablePeerVerification())
                .run(context -> {
                    IOManager io = context.getBean(IOManager.class);
                    StringRedisTemplate template = context.getBean(StringRedisTemplate.class);
                    io.spawnOn(1, () -> template.opsForValue().increment("cosched:tls"))
                            .join();
                    long remote = io.carrierStats().get(1).remoteWakeups();
                    long local = io.carrierStats().get(1).localWakeups();
                    assertThat(io.spawnOn(1, () -> {
                                        long n = 0;
                                        for (int i = 0; i < 20; i++) {
                                            n = template.opsForValue().increment("cosched:tls");
                                        }
                                        return n;
                                    })
                                    .join())
                            .isGreaterThanOrEqualTo(21);
                    assertStayedLocal(io, 1, remote, local, 20);
                    assertThat(io.spawnOn(1, () -> replyThread(template)).join())
                            .isEqualTo(loopThread(io, 1));
                });
    }

    @Test
    void aCommandPastTheTimeoutFailsWithSpringsExceptionAndTheConnectionGoesOn() {
        runner.withPropertyValues("spring.data.redis.timeout=300ms").run(context -> {
            IOManager io = context.getBean(IOManager.class);
            StringRedisTemplate template = context.getBean(StringRedisTemplate.class);
            template.delete("cosched:never");
            String outcome = io.spawnOn(0, () -> {
                        long started = System.nanoTime();
                        try {
                            // on the loop's shared connection: BLPOP there would hold it, so a script that takes a
                            // second
                            template.execute((RedisCallback<Object>) c -> c.scriptingCommands()
                                    .eval(
                                            "local t = redis.call('TIME'); local s = t[1] + 1; while tonumber(redis.call('TIME')[1]) <= s do end; return 1"
                                                    .getBytes(StandardCharsets.UTF_8),
                                            org.springframework.data.redis.connection.ReturnType.INTEGER,
                                            0));
                            return "answered";
                        } catch (DataAccessException e) {
                            long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
                            return "failed within 1.5 s " + (ms < 1500) + ": "
                                    + e.getClass().getSimpleName();
                        }
                    })
                    .join();
            assertThat(outcome).isEqualTo("failed within 1.5 s true: QueryTimeoutException");
            // the script ends on the server; the connection answers again
            eventually(
                    Duration.ofSeconds(10),
                    () -> {
                        try {
                            return io.spawnOn(0, () -> template.opsForValue().increment("cosched:after"))
                                            .join()
                                    > 0;
                        } catch (Exception e) {
                            return false;
                        }
                    },
                    () -> "the connection did not answer again");
        });
    }

    /**
     * The role ({@code master}, {@code slave}) the Redis server at {@code address} reports; what went wrong when it
     * could not be asked (the Sentinel closes that server's clients while it reconfigures it).
     */
    private static String role(SocketAddress address) {
        InetSocketAddress a = (InetSocketAddress) address;
        RedisClient client = RedisClient.create(RedisURI.builder()
                .withHost(a.getHostString())
                .withPort(a.getPort())
                .withPassword("cosched".toCharArray())
                .build());
        try (var c = client.connect()) {
            return c.sync()
                    .info("replication")
                    .lines()
                    .filter(l -> l.startsWith("role:"))
                    .findFirst()
                    .map(l -> l.substring(5).strip())
                    .orElse("unknown");
        } catch (RedisException e) {
            return "not answering: " + e;
        } finally {
            client.shutdown();
        }
    }

    /** What a test does to the server while the workers of {@link #assertLoadComesBackOnItsLoops} run. */
    private interface Fault {
        void strike() throws Exception;
    }

    /**
     * Eight coroutines, four per loop, increment {@code key} in a loop while {@code fault} strikes; afterwards every
     * one gets answers again, and over two clean windows in a row their answers resume them on their own loops only.
     */
    private static void assertLoadComesBackOnItsLoops(
            IOManager io, StringRedisTemplate template, String key, Fault fault) throws Exception {
        LoadUnderFault load = new LoadUnderFault(
                io,
                8,
                () -> template.opsForValue().increment(key),
                Duration.ofMillis(5)); // a backoff: while Redis is down a command fails at once
        fault.strike();
        load.struck();
        load.awaitAnswersAfterFault(3, Duration.ofSeconds(60));
        // The window that must stay local is one without failures that follows another without failures: a
        // worker whose command failed backs off with Thread.sleep, and a sleeping virtual thread is woken by the
        // JDK's unparker thread, a remote wake-up that says nothing about where Redis's answers resume. After a
        // clean window in which every worker answered 20 times, no worker is still in a backoff either. A
        // straggling failure after recovery (a command caught by the reconnect) so moves the windows on.
        // A monitor no longer shows here: since JDK 24 a virtual thread blocked on a synchronized block is resumed
        // by the JDK's "VirtualThread-unblocker" thread, and a loop's four workers can meet on one (a class-loading
        // lock when recovery first runs new code, a library's synchronized block). Traced over a dozen failovers,
        // every remote wake-up past the backoffs' came from that thread, and once in about thirty runs three fell
        // into the second clean window and failed this test; such resumes are now counted in monitorWakeups, not
        // remoteWakeups. The windows still move on past one with remote wake-ups, until the deadline: a
        // connection reconnected on the other loop is resumed remotely for every answer, in every window, and
        // still fails here.
        long[] remote = new long[2];
        long[] local = new long[2];
        long[] lastRemote = new long[2];
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        boolean previousClean = false;
        while (true) {
            int failuresBefore = load.failures();
            for (int loopIndex = 0; loopIndex < 2; loopIndex++) {
                remote[loopIndex] = io.carrierStats().get(loopIndex).remoteWakeups();
                local[loopIndex] = io.carrierStats().get(loopIndex).localWakeups();
            }
            load.awaitMoreAnswers(20, Duration.ofSeconds(30));
            for (int loopIndex = 0; loopIndex < 2; loopIndex++) {
                lastRemote[loopIndex] = io.carrierStats().get(loopIndex).remoteWakeups() - remote[loopIndex];
            }
            boolean clean = load.failures() == failuresBefore;
            boolean resumedLocally = !carrierMode() || (lastRemote[0] == 0 && lastRemote[1] == 0);
            if (clean && previousClean && resumedLocally) {
                break;
            }
            previousClean = clean;
            assertThat(System.nanoTime() - deadline)
                    .as(
                            "60 s after recovery, commands still failing or answers resumed remotely "
                                    + "(%d on loop 0, %d on loop 1 in the last window): %s",
                            lastRemote[0], lastRemote[1], load)
                    .isNegative();
        }
        load.stop();
        // reconnected on their own loops: the answers after recovery resumed the coroutines locally
        assertStayedLocal(io, 0, remote[0], local[0], 80);
        assertStayedLocal(io, 1, remote[1], local[1], 80);
    }

    @Test
    void aServerRestartMidLoadFailsCommandsThenTheLoopsConnectionsComeBack() {
        assumeTrue(
                RESTART != null,
                "no restart command: COSCHED_TEST_REDIS_RESTART is not set (.ci/redis.sh sets it); "
                        + "cosched-redis's aDroppedConnectionReconnectsOnTheSameLoop covers a lost connection without it");
        runner.run(context -> assertLoadComesBackOnItsLoops(
                context.getBean(IOManager.class),
                context.getBean(StringRedisTemplate.class),
                "cosched:load",
                () -> LoadUnderFault.runCommand(RESTART)));
    }

    /**
     * A Sentinel failover under load: the Sentinel promotes the replica and makes the old master its replica,
     * closing that server's client connections; each loop's connection asks the Sentinel again, finds the new
     * master, and its answers resume the coroutines on their own loop as before.
     */
    @Test
    void aSentinelFailoverMidLoadMovesTheLoopsConnectionsToTheNewMaster() {
        assumeTrue(
                SENTINEL != null && FAILOVER_MASTER != null,
                "no replicated Redis behind the Sentinel: "
                        + "COSCHED_TEST_REDIS_SENTINEL or _FAILOVER_MASTER is not set (.ci/redis.sh sets both); "
                        + "aServerRestartMidLoadFailsCommandsThenTheLoopsConnectionsComeBack covers a lost server");
        RedisClient sentinel = RedisClient.create(RedisURI.create("redis://" + SENTINEL));
        try (StatefulRedisSentinelConnection<String, String> s = sentinel.connectSentinel()) {
            new ApplicationContextRunner()
                    .withConfiguration(AutoConfigurations.of(
                            CoschedAutoConfiguration.class,
                            CoschedRedisAutoConfiguration.class,
                            DataRedisAutoConfiguration.class))
                    .withPropertyValues(
                            "spring.data.redis.sentinel.master=" + FAILOVER_MASTER,
                            "spring.data.redis.sentinel.nodes=" + SENTINEL,
                            "spring.data.redis.password=cosched",
                            "cosched.io.threads=2",
                            "cosched.stall.threshold=0")
                    .run(context -> {
                        assertThat(context.getBean(RedisConnectionFactory.class))
                                .isInstanceOf(LoopLettuceConnectionFactory.class);
                        SocketAddress before = s.sync().getMasterAddrByName(FAILOVER_MASTER);
                        assertLoadComesBackOnItsLoops(
                                context.getBean(IOManager.class),
                                context.getBean(StringRedisTemplate.class),
                                "cosched:failover",
                                () -> {
                                    assertThat(s.sync().failover(FAILOVER_MASTER))
                                            .isEqualTo("OK");
                                    eventually(
                                            Duration.ofSeconds(30),
                                            () -> !before.equals(s.sync().getMasterAddrByName(FAILOVER_MASTER)),
                                            () -> "the Sentinel still names " + before + " as the master");
                                    // and the old master is a replica now: the loops' connections to it are closed
                                    eventually(
                                            Duration.ofSeconds(30),
                                            () -> "slave".equals(role(before)),
                                            () -> before + " is still " + role(before));
                                });
                        // the answers came from the new master: it is a master, and the old one its replica
                        assertThat(s.sync().getMasterAddrByName(FAILOVER_MASTER))
                                .isNotEqualTo(before);
                        assertThat(context.getBean(StringRedisTemplate.class).execute((RedisCallback<String>) c ->
                                        c.serverCommands().info("replication").getProperty("role")))
                                .isEqualTo("master");
                    });
        } finally {
            sentinel.shutdown();
        }
    }

    @Test
    void offWhenTurnedOffAndLeftAloneWhereItCannotGo() {
        runner.withPropertyValues("cosched.redis.enabled=false")
                .run(context -> assertThat(context.getBean(RedisConnectionFactory.class))
                        .isExactlyInstanceOf(LettuceConnectionFactory.class));
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(
                        CoschedAutoConfiguration.class,
                        CoschedRedisAutoConfiguration.class,
                        DataRedisAutoConfiguration.class))
                .withPropertyValues(
                        "spring.data.redis.masterreplica.nodes=127.0.0.1:1,127.0.0.1:2", "cosched.io.threads=2")
                .run(context -> assertThat(context.getBean(RedisConnectionFactory.class))
                        .isExactlyInstanceOf(LettuceConnectionFactory.class));
    }
}
