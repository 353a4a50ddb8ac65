package io.cosched.spring.boot.autoconfigure.redis;

import static io.cosched.spring.boot.autoconfigure.redis.RedisThreads.loopThread;
import static io.cosched.spring.boot.autoconfigure.redis.RedisThreads.replyThread;
import static org.assertj.core.api.Assertions.assertThat;

import io.cosched.IOManager;
import io.cosched.spring.boot.autoconfigure.CoschedAutoConfiguration;
import io.cosched.spring.data.redis.LoopLettuceConnectionFactory;
import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * Spring Boot's Lettuce connection factory on cosched's loops, against a stand-in that answers PING
 * ({@code RedisOnTheLoopTest} runs the commands against a real Redis).
 */
@Timeout(60)
class CoschedRedisAutoConfigurationTest {

    private PingServer redis;
    /** An application that left cosched's own auto-configuration out: cosched on, but no IOManager. */
    private ApplicationContextRunner withoutIOManager;

    private ApplicationContextRunner runner;

    @BeforeEach
    void start() throws IOException {
        redis = new PingServer();
        withoutIOManager = new ApplicationContextRunner()
                .withPropertyValues(
                        "cosched.io.threads=2",
                        "cosched.scheduler.threads=1",
                        "cosched.stall.threshold=0",
                        "spring.data.redis.host=127.0.0.1",
                        "spring.data.redis.port=" + redis.port())
                .withConfiguration(
                        AutoConfigurations.of(CoschedRedisAutoConfiguration.class, DataRedisAutoConfiguration.class));
        runner = withoutIOManager.withConfiguration(AutoConfigurations.of(CoschedAutoConfiguration.class));
    }

    @AfterEach
    void stop() throws IOException {
        redis.close();
    }

    @Test
    void springBootsFactoryGoesOnTheLoopsAndACoroutinesRepliesAreReadByItsOwnLoop() {
        runner.run(context -> {
            IOManager io = context.getBean(IOManager.class);
            RedisConnectionFactory factory = context.getBean(RedisConnectionFactory.class);
            assertThat(factory).isInstanceOf(LoopLettuceConnectionFactory.class);
            assertThat(((LoopLettuceConnectionFactory) factory).ioManager()).isSameAs(io);
            StringRedisTemplate template = context.getBean(StringRedisTemplate.class);
            for (int loopIndex = 0; loopIndex < 2; loopIndex++) {
                int home = loopIndex;
                assertThat(io.spawnOn(home, () -> replyThread(template)).join()).isEqualTo(loopThread(io, home));
            }
            // outside any coroutine: the factory's own connection, on Lettuce's threads
            assertThat(replyThread(template)).isNotIn(loopThread(io, 0), loopThread(io, 1));
        });
    }

    @Test
    void aPlainFactoryOfTheApplicationsOwnGoesOnTheLoopsWithItsSettings() {
        runner.withBean("myRedis", LettuceConnectionFactory.class, () -> {
                    LettuceConnectionFactory own =
                            new LettuceConnectionFactory(new RedisStandaloneConfiguration("127.0.0.1", redis.port()));
                    own.setShareNativeConnection(false);
                    return own;
                })
                .run(context -> {
                    // Spring Boot's backs off for it; it is the one replaced
                    assertThat(context).hasSingleBean(RedisConnectionFactory.class);
                    LettuceConnectionFactory factory = context.getBean(LettuceConnectionFactory.class);
                    assertThat(factory).isInstanceOf(LoopLettuceConnectionFactory.class);
                    assertThat(factory.getShareNativeConnection()).isFalse();
                    assertThat(factory.getStandaloneConfiguration().getPort()).isEqualTo(redis.port());
                });
    }

    @Test
    void aFactoryThatCannotBeCopiedIsLeftAsTheApplicationMadeIt() {
        // a subclass: the copy would lose whatever it adds
        LettuceConnectionFactory own =
                new LettuceConnectionFactory(new RedisStandaloneConfiguration("127.0.0.1", redis.port())) {};
        runner.withBean("myRedis", LettuceConnectionFactory.class, () -> own)
                .run(context -> assertThat(context.getBean(RedisConnectionFactory.class))
                        .isSameAs(own));
    }

    @Test
    void aLoopFactoryOfTheApplicationsOwnIsLeftAsItIs() {
        runner.withUserConfiguration(OwnLoopFactory.class)
                .run(context -> assertThat(context.getBean(RedisConnectionFactory.class))
                        .isSameAs(context.getBean(OwnLoopFactory.class).made));
    }

    @Configuration(proxyBeanMethods = false)
    static class OwnLoopFactory {

        LoopLettuceConnectionFactory made;

        @Bean
        LoopLettuceConnectionFactory myRedis(IOManager io, Environment environment) {
            made = new LoopLettuceConnectionFactory(
                    new RedisStandaloneConfiguration(
                            "127.0.0.1", environment.getRequiredProperty("spring.data.redis.port", Integer.class)),
                    LettuceClientConfiguration.defaultConfiguration(),
                    io);
            return made;
        }
    }

    @Test
    void isOffWithCoschedRedisEnabledFalse() {
        runner.withPropertyValues("cosched.redis.enabled=false").run(CoschedRedisAutoConfigurationTest::isLeftAlone);
    }

    /** {@code cosched.enabled=false} turns all of cosched off, also beside an application's own IOManager. */
    @Test
    void isOffWhenCoschedIsDisabledEvenBesideTheApplicationsOwnIOManager() {
        runner.withPropertyValues("cosched.enabled=false")
                .withBean(
                        IOManager.class,
                        () -> IOManager.builder().name("own").threads(1).build())
                .run(CoschedRedisAutoConfigurationTest::isLeftAlone);
    }

    @Test
    void isOffWithoutAnIOManager() {
        withoutIOManager.run(CoschedRedisAutoConfigurationTest::isLeftAlone);
    }

    @Test
    void appliesNothingWithoutSpringDataRedisLettuce() {
        // Spring Boot still makes its factory here: only the class condition keeps cosched's hands off it
        runner.withClassLoader(new FilteredClassLoader(LettuceConnectionFactory.class))
                .run(CoschedRedisAutoConfigurationTest::isLeftAlone);
    }

    @Test
    void appliesNothingWithoutCoschedRedis() {
        runner.withClassLoader(new FilteredClassLoader(LoopLettuceConnectionFactory.class))
                .run(CoschedRedisAutoConfigurationTest::isLeftAlone);
    }

    /**
     * Enough of Redis for Lettuce to connect and ping, on platform threads so that nothing it does runs on a loop:
     * RESP2, HELLO refused (Lettuce then stays on RESP2), CLIENT and SELECT accepted, PING answered.
     */
    static final class PingServer implements AutoCloseable {

        private final ServerSocket server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());

        PingServer() throws IOException {
            Thread.ofPlatform().daemon().name("redis-stand-in").start(this::accept);
        }

        int port() {
            return server.getLocalPort();
        }

        private void accept() {
            while (!server.isClosed()) {
                try {
                    Socket s = server.accept();
                    Thread.ofPlatform().daemon().name("redis-stand-in-client").start(() -> serve(s));
                } catch (IOException e) {
                    return; // closed
                }
            }
        }

        private void serve(Socket socket) {
            try (socket;
                    InputStream in = new BufferedInputStream(socket.getInputStream());
                    OutputStream out = socket.getOutputStream()) {
                String command;
                while ((command = readCommand(in)) != null) {
                    String reply = switch (command) {
                        case "PING" -> "+PONG\r\n";
                        case "CLIENT", "SELECT" -> "+OK\r\n";
                        default -> "-ERR unknown command '" + command + "'\r\n";
                    };
                    out.write(reply.getBytes(StandardCharsets.UTF_8));
                    out.flush();
                }
            } catch (IOException e) {
                // the client went away
            }
        }

        /** The name of the next command (a RESP array of bulk strings), or {@code null} at the end of the stream. */
        private static String readCommand(InputStream in) throws IOException {
            String head = line(in);
            if (head == null) {
                return null;
            }
            int parts = Integer.parseInt(head.substring(1));
            String name = null;
            for (int i = 0; i < parts; i++) {
                int length = Integer.parseInt(line(in).substring(1));
                String part = new String(in.readNBytes(length), StandardCharsets.UTF_8);
                in.readNBytes(2);
                if (name == null) {
                    name = part.toUpperCase(Locale.ROOT);
                }
            }
            return name;
        }

        private static String line(InputStream in) throws IOException {
            StringBuilder sb = new StringBuilder();
            int c;
            while ((c = in.read()) != -1) {
                if (c == '\r') {
                    in.read();
                    return sb.toString();
                }
                sb.append((char) c);
            }
            return null;
        }

        @Override
        public void close() throws IOException {
            server.close();
        }
    }

    /** Spring Boot's own Lettuce factory, untouched, and no post-processor to change it. */
    private static void isLeftAlone(AssertableApplicationContext context) {
        assertThat(context.getBean(RedisConnectionFactory.class)).isExactlyInstanceOf(LettuceConnectionFactory.class);
        assertThat(context).doesNotHaveBean(LoopLettuceConnectionFactoryPostProcessor.class);
    }
}
