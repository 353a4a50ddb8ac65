package io.cosched.netty;

import static io.cosched.TestSupport.eventually;
import static org.assertj.core.api.Assertions.assertThat;

import io.cosched.Coroutine;
import io.cosched.CoroutineState;
import io.cosched.IOManager;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.embedded.EmbeddedChannel;
import java.io.InterruptedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The inbox's drain (the rest of a reply thrown away on the loop) and an interrupt that leaves the channel open. */
@Timeout(60)
class NettyInboxTest {

    private IOManager io;

    @BeforeEach
    void start() {
        io = IOManager.builder()
                .name("inbox-io")
                .threads(1)
                .stallThreshold(Duration.ZERO)
                .build();
        io.start();
    }

    @AfterEach
    void stop() {
        io.stop(Duration.ofSeconds(10));
    }

    private static ByteBuf text(String s) {
        return Unpooled.copiedBuffer(s, StandardCharsets.US_ASCII);
    }

    private static boolean isEnd(Object msg) {
        return ((ByteBuf) msg).toString(StandardCharsets.US_ASCII).equals("end");
    }

    @Test
    void aDrainReleasesWhatIsQueuedAndWhatArrivesUntilTheLastMessageThenRunsOnce() {
        NettyInbox inbox = new NettyInbox();
        EmbeddedChannel ch = new EmbeddedChannel(inbox);
        List<ByteBuf> sent = new ArrayList<>(List.of(text("a"), text("b"), text("c"), text("end")));
        ch.writeInbound(sent.get(0), sent.get(1));
        AtomicInteger drained = new AtomicInteger();
        inbox.drain(NettyInboxTest::isEnd, drained::incrementAndGet);
        assertThat(inbox.isDraining()).isTrue();
        assertThat(inbox.isEmpty()).isTrue();
        ch.writeInbound(sent.get(2));
        assertThat(drained.get()).isZero();
        ch.writeInbound(sent.get(3));
        assertThat(drained.get()).isEqualTo(1);
        assertThat(inbox.isDraining()).isFalse();
        assertThat(sent).allMatch(b -> b.refCnt() == 0);
        ByteBuf next = text("next reply");
        ch.writeInbound(next);
        assertThat(inbox.poll()).as("the inbox serves the next reader").isSameAs(next);
        next.release();
        assertThat(inbox.queuedBytes()).isZero();
    }

    @Test
    void whenTheLastMessageIsQueuedAlreadyTheDrainEndsAtOnceOnTheCaller() {
        NettyInbox inbox = new NettyInbox();
        EmbeddedChannel ch = new EmbeddedChannel(inbox);
        ch.writeInbound(text("a"), text("end"));
        AtomicInteger drained = new AtomicInteger();
        inbox.drain(NettyInboxTest::isEnd, drained::incrementAndGet);
        assertThat(drained.get()).isEqualTo(1);
        assertThat(inbox.isDraining()).isFalse();
        assertThat(inbox.isEmpty()).isTrue();
    }

    @Test
    void anInputThatEndsBeforeTheLastMessageNeverRunsTheDrained() {
        NettyInbox inbox = new NettyInbox();
        EmbeddedChannel ch = new EmbeddedChannel(inbox);
        AtomicInteger drained = new AtomicInteger();
        inbox.drain(NettyInboxTest::isEnd, drained::incrementAndGet);
        ByteBuf a = text("a");
        ch.writeInbound(a);
        assertThat(a.refCnt()).isZero();
        ch.close();
        assertThat(inbox.isDraining()).isFalse();
        assertThat(inbox.isEnded()).isTrue();
        assertThat(drained.get()).isZero();
    }

    @Test
    void anInboxThatKeepsItsChannelOpenAnswersAnInterruptedReaderWithInterruptedIOException() throws Exception {
        try (ServerSocket server = new ServerSocket(0, 5, InetAddress.getLoopbackAddress())) {
            Thread.ofPlatform().daemon().start(() -> {
                try (Socket s = server.accept()) {
                    s.getInputStream().read(); // hold the connection until the client closes it
                } catch (Exception ignored) {
                    // the test sees it from its side
                }
            });
            NettyInbox inbox = new NettyInbox(NettyInbox.DEFAULT_HIGH_WATER, NettyInbox.DEFAULT_LOW_WATER, false);
            Channel ch = NettyBlocking.connect(
                    io.bootstrap(0).handler(inbox),
                    new InetSocketAddress(InetAddress.getLoopbackAddress(), server.getLocalPort()),
                    null);
            Coroutine<String> reader = io.spawn(() -> {
                try {
                    inbox.take(0);
                    return "read";
                } catch (InterruptedIOException e) {
                    return "interrupted, status " + Thread.currentThread().isInterrupted();
                }
            });
            eventually(Duration.ofSeconds(5), () -> reader.state() == CoroutineState.WAITING, reader::toString);
            reader.interrupt();
            assertThat(reader.join()).isEqualTo("interrupted, status true");
            assertThat(ch.isActive()).as("left open").isTrue();
            ch.close().sync();
        }
    }
}
