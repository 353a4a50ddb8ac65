package io.cosched;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The JDK's socket pollers (virtual threads it starts on the first blocking socket call) must not
 * inherit a cosched loop as their scheduler, even when the first blocking socket call of the JVM
 * happens inside a coroutine. Runs in a fresh JVM so that this really is the first socket call.
 */
@Tag("carrier-only")
class JdkPollerTest {

    @Test
    @Timeout(120)
    void blockingSocketsKeepWorkingWhileTheLoopOfTheFirstSocketCallIsBlocked() throws Exception {
        TestSupport.Forked run = TestSupport.fork(
                Program.class,
                List.of("--add-opens", "java.base/java.lang=ALL-UNNAMED", "--enable-native-access=ALL-UNNAMED"),
                Duration.ofSeconds(90));
        assertThat(run.exitCode()).as(run.output()).isZero();
        assertThat(run.output())
                .contains("first socket call on VirtualThread")
                .contains("@poll-io-0")
                .contains("default virtual thread read 42 while the loop was blocked");
    }

    public static final class Program {
        public static void main(String[] args) throws Exception {
            try (IOManager io = IOManager.builder().name("poll-io").threads(1).build();
                    ServerSocket server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
                io.start();
                Thread acceptor = Thread.ofPlatform().daemon().start(() -> {
                    try {
                        while (true) {
                            Socket s = server.accept();
                            Thread.ofPlatform().daemon().start(() -> {
                                try (s;
                                        OutputStream out = s.getOutputStream();
                                        InputStream in = s.getInputStream()) {
                                    out.write(in.read()); // echo one byte
                                } catch (Exception ignored) {
                                }
                            });
                        }
                    } catch (Exception closed) {
                    }
                });
                // the JVM's first virtual-thread socket call, inside a coroutine on the loop
                String where = io.spawn(() -> {
                            try (Socket s = new Socket(InetAddress.getLoopbackAddress(), server.getLocalPort())) {
                                s.getOutputStream().write(1);
                                if (s.getInputStream().read() != 1) {
                                    throw new IllegalStateException("echo");
                                }
                            }
                            return Thread.currentThread().toString();
                        })
                        .join();
                System.out.println("first socket call on " + where);

                // now hold the loop thread hostage and do blocking socket I/O on a default virtual thread
                CountDownLatch release = new CountDownLatch(1);
                io.eventLoopGroup().iterator().next().execute(() -> {
                    try {
                        release.await();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                });
                int[] got = {-1};
                Thread reader = Thread.ofVirtual().start(() -> {
                    try (Socket s = new Socket(InetAddress.getLoopbackAddress(), server.getLocalPort())) {
                        s.getOutputStream().write(42);
                        got[0] = s.getInputStream().read(); // parks: needs a poller to wake it
                    } catch (Exception e) {
                        e.printStackTrace();
                    }
                });
                boolean finished = reader.join(Duration.ofSeconds(20));
                release.countDown();
                if (!finished || got[0] != 42) {
                    System.out.println("socket read stalled while the loop was blocked: the pollers run on it");
                    System.exit(2);
                }
                System.out.println("default virtual thread read " + got[0] + " while the loop was blocked");
                acceptor.interrupt();
            }
        }
    }
}
