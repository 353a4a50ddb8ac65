package io.cosched.spring.data.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cosched.IOManager;
import io.cosched.TestSupport;
import io.cosched.redis.LoopEventLoopGroupProviderTest;
import io.cosched.redis.RespStub;
import io.lettuce.core.api.async.RedisAsyncCommands;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.commons.pool2.impl.GenericObjectPoolConfig;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.data.redis.connection.RedisClusterConfiguration;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.RedisStaticMasterReplicaConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettucePoolingClientConfiguration;
import org.springframework.data.redis.core.RedisCallback;
import org.springframework.data.redis.core.StringRedisTemplate;

/** The Spring Data Redis factory without Spring Boot, against {@link RespStub} (RedisOnTheLoopTest uses a real Redis). */
@Timeout(60)
class LoopLettuceConnectionFactoryTest {

    private IOManager io;
    private RespStub stub;
    private ClientResources base;
    private LoopLettuceConnectionFactory factory;

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
        if (factory != null) {
            factory.destroy();
        }
        base.shutdown(0, 2, TimeUnit.SECONDS).get(10, TimeUnit.SECONDS);
        stub.close();
        io.stop(Duration.ofSeconds(10));
    }

    private RedisStandaloneConfiguration standalone() {
        return new RedisStandaloneConfiguration("127.0.0.1", stub.port());
    }

    private LoopLettuceConnectionFactory started(LettuceClientConfiguration client) {
        factory = new LoopLettuceConnectionFactory(standalone(), client, io);
        factory.afterPropertiesSet();
        return factory;
    }

    /** The thread that completes a reply on the connection the template gives the caller. */
    @SuppressWarnings("unchecked")
    static String completer(StringRedisTemplate template) {
        return template.execute((RedisCallback<String>) c -> {
            try {
                return LoopEventLoopGroupProviderTest.replyThread(
                        ((RedisAsyncCommands<byte[], byte[]>) c.getNativeConnection()).getStatefulConnection());
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
    }

    private String loopThread(int index) throws Exception {
        return io.eventLoop(index)
                .submit(() -> Thread.currentThread().getName())
                .get(10, TimeUnit.SECONDS);
    }

    @Test
    void aCoroutinesCallsUseAConnectionOfItsOwnLoopWhichResumesIt() throws Exception {
        StringRedisTemplate template = new StringRedisTemplate(started(
                LettuceClientConfiguration.builder().clientResources(base).build()));
        for (int loopIndex = 0; loopIndex < 2; loopIndex++) {
            int home = loopIndex;
            assertThat(io.spawnOn(home, () -> completer(template)).join()).isEqualTo(loopThread(home));
            long remote = io.carrierStats().get(home).remoteWakeups();
            long local = io.carrierStats().get(home).localWakeups();
            String last = io.spawnOn(home, () -> {
                        String v = null;
                        for (int i = 0; i < 20; i++) {
                            template.opsForValue().set("k" + home, "v" + i);
                            v = template.opsForValue().get("k" + home);
                        }
                        return v;
                    })
                    .join();
            assertThat(last).isEqualTo("v19");
            if (TestSupport.carrierMode()) {
                assertThat(io.carrierStats().get(home).localWakeups() - local)
                        .as("loop %d", home)
                        .isGreaterThanOrEqualTo(40);
                assertThat(io.carrierStats().get(home).remoteWakeups() - remote)
                        .as("loop %d", home)
                        .isZero();
            }
        }
        assertThat(stub.connections()).as("one shared connection per loop").isEqualTo(2);
        // a plain thread gets the factory's own connection, on Lettuce's own threads
        assertThat(completer(template)).isNotIn(loopThread(0), loopThread(1));
        assertThat(stub.connections()).isEqualTo(3);
    }

    @Test
    void aLoopThreadOutsideAnyCoroutineIsAnsweredOnAnotherLoopNotOnItself() throws Exception {
        StringRedisTemplate template = new StringRedisTemplate(started(
                LettuceClientConfiguration.builder().clientResources(base).build()));
        // it blocks the loop's own thread: the reply must be read by another one
        assertThat(io.eventLoop(0).submit(() -> completer(template)).get(10, TimeUnit.SECONDS))
                .isEqualTo(loopThread(1));
        assertThat(io.eventLoop(1).submit(() -> completer(template)).get(10, TimeUnit.SECONDS))
                .isEqualTo(loopThread(0));
    }

    @Test
    void aStoppedFactoryClosesItsLoopsClientsAndStartsThemAgain() throws Exception {
        StringRedisTemplate template = new StringRedisTemplate(started(
                LettuceClientConfiguration.builder().clientResources(base).build()));
        io.spawnOn(1, () -> {
                    template.opsForValue().set("a", "1");
                    return null;
                })
                .join();
        LettuceConnectionFactory loop1 = factory.loopFactory(1);
        factory.stop();
        assertThat(factory.loopFactory(1)).isNull();
        assertThat(loop1.isRunning()).isFalse();
        assertThatThrownBy(() ->
                        io.spawnOn(1, () -> template.opsForValue().get("a")).join())
                .hasRootCauseInstanceOf(IllegalStateException.class);
        factory.start();
        assertThat(io.spawnOn(1, () -> template.opsForValue().get("a")).join()).isEqualTo("1");
        assertThat(io.spawnOn(1, () -> completer(template)).join()).isEqualTo(loopThread(1));
    }

    @Test
    void withoutClientResourcesTheLoopsClientsShareOnesMadeForThemAndStopThem() throws Exception {
        StringRedisTemplate template =
                new StringRedisTemplate(started(LettuceClientConfiguration.defaultConfiguration()));
        assertThat(io.spawnOn(0, () -> {
                            template.opsForValue().set("b", "2");
                            return template.opsForValue().get("b");
                        })
                        .join())
                .isEqualTo("2");
        assertThat(io.spawnOn(0, () -> completer(template)).join()).isEqualTo(loopThread(0));
        factory.destroy();
        factory = null;
        assertThat(io.spawnOn(0, () -> "the loops go on").join()).isEqualTo("the loops go on");
    }

    @Test
    void aPoolsLimitsAreSplitOverTheLoops() {
        GenericObjectPoolConfig<io.lettuce.core.api.StatefulConnection<?, ?>> pool = new GenericObjectPoolConfig<>();
        pool.setMaxTotal(5);
        pool.setMaxIdle(3);
        pool.setMinIdle(0);
        started(LettucePoolingClientConfiguration.builder()
                .poolConfig(pool)
                .clientResources(base)
                .build());
        List<GenericObjectPoolConfig<?>> loops = List.of(poolOf(0), poolOf(1));
        assertThat(loops).extracting(GenericObjectPoolConfig::getMaxTotal).containsExactly(3, 2);
        assertThat(loops).extracting(GenericObjectPoolConfig::getMaxIdle).containsExactly(2, 1);
        assertThat(loops).extracting(GenericObjectPoolConfig::getMinIdle).containsExactly(0, 0);
        assertThat(pool.getMaxTotal()).as("the application's own is untouched").isEqualTo(5);
    }

    private GenericObjectPoolConfig<?> poolOf(int loopIndex) {
        return ((LettucePoolingClientConfiguration)
                        factory.loopFactory(loopIndex).getClientConfiguration())
                .getPoolConfig();
    }

    @Test
    void aPlainFactoryIsCopiedWithItsSettings() {
        LettuceConnectionFactory plain = new LettuceConnectionFactory(
                standalone(),
                LettuceClientConfiguration.builder()
                        .clientResources(base)
                        .commandTimeout(Duration.ofSeconds(7))
                        .build());
        plain.setShareNativeConnection(false);
        plain.setValidateConnection(true);
        plain.setPhase(7);
        plain.setEarlyStartup(false);
        assertThat(LoopLettuceConnectionFactory.unsupportedReason(plain, io)).isNull();
        factory = LoopLettuceConnectionFactory.from(plain, io);
        assertThat(factory.getStandaloneConfiguration().getPort()).isEqualTo(stub.port());
        assertThat(factory.getPort()).isEqualTo(stub.port());
        assertThat(factory.getClientConfiguration()).isSameAs(plain.getClientConfiguration());
        assertThat(factory.getTimeout()).isEqualTo(7000);
        assertThat(factory.getShareNativeConnection()).isFalse();
        assertThat(factory.getValidateConnection()).isTrue();
        assertThat(factory.getPhase()).isEqualTo(7);
        assertThat(factory.isEarlyStartup()).isFalse();
    }

    @Test
    void whatCannotGoOnTheLoopsIsRefusedWithTheReason() {
        RedisClusterConfiguration cluster = new RedisClusterConfiguration(List.of("127.0.0.1:7000"));
        assertThat(LoopLettuceConnectionFactory.unsupportedReason(cluster, io))
                .startsWith("it is a RedisClusterConfiguration");
        assertThatThrownBy(() -> new LoopLettuceConnectionFactory(
                        cluster, LettuceClientConfiguration.defaultConfiguration(), io))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("configuration: it is a RedisClusterConfiguration");
        assertThat(LoopLettuceConnectionFactory.unsupportedReason(
                        new RedisStaticMasterReplicaConfiguration("127.0.0.1"), io))
                .startsWith("it is a RedisStaticMasterReplicaConfiguration");
        LettuceConnectionFactory subclass = new LettuceConnectionFactory(standalone()) {};
        assertThat(LoopLettuceConnectionFactory.unsupportedReason(subclass, io))
                .contains("not a plain LettuceConnectionFactory");
        LettuceConnectionFactory started = new LettuceConnectionFactory(
                standalone(),
                LettuceClientConfiguration.builder().clientResources(base).build());
        started.afterPropertiesSet();
        try {
            assertThat(LoopLettuceConnectionFactory.unsupportedReason(started, io))
                    .isEqualTo("it has started already");
        } finally {
            started.destroy();
        }
    }
}
