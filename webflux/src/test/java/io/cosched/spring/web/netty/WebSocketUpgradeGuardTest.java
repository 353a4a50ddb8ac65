package io.cosched.spring.web.netty;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import reactor.netty.NettyPipeline;

/**
 * The guard's own paths on an embedded channel: an upgrade request takes the HTTP decoder out and the bytes after
 * it are held, not decoded; a refused upgrade closes the connection after its answer and releases what was held;
 * a client that sends more than 1 MiB before the answer is closed. (Frames fed in after a 101 are tested end to end
 * in the starter's WebSocketWebTest.)
 */
class WebSocketUpgradeGuardTest {

    private static final String UPGRADE = "GET /ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n";

    private static EmbeddedChannel channel() {
        EmbeddedChannel ch = new EmbeddedChannel();
        ch.pipeline().addLast(NettyPipeline.HttpCodec, new HttpServerCodec());
        WebSocketUpgradeGuard.install(ch);
        return ch;
    }

    private static ByteBuf ascii(String s) {
        return Unpooled.copiedBuffer(s, StandardCharsets.US_ASCII);
    }

    @Test
    void aRequestThatIsNoUpgradeGoesOnAndTheNextOnTheConnectionIsDecoded() {
        EmbeddedChannel ch = channel();
        ch.writeInbound(ascii("GET /a HTTP/1.1\r\nHost: x\r\n\r\nGET /b HTTP/1.1\r\nHost: x\r\n\r\n"));
        assertThat(((HttpRequest) ch.readInbound()).uri()).isEqualTo("/a");
        assertThat((Object) ch.readInbound()).isInstanceOf(LastHttpContent.class);
        assertThat(((HttpRequest) ch.readInbound()).uri()).isEqualTo("/b");
        ch.finishAndReleaseAll();
    }

    @Test
    void theBytesAfterAnUpgradeRequestAreHeldNotDecodedAsHttp() {
        EmbeddedChannel ch = channel();
        ByteBuf early = Unpooled.buffer().writeBytes(UPGRADE.getBytes(StandardCharsets.US_ASCII));
        early.writeBytes(new byte[] {(byte) 0x81, (byte) 0x82, 1, 2, 3, 4, 5, 6}); // a masked frame, not HTTP
        ch.writeInbound(early);
        assertThat((Object) ch.readInbound()).isInstanceOf(HttpRequest.class);
        assertThat((Object) ch.readInbound()).isInstanceOf(LastHttpContent.class);
        assertThat((Object) ch.readInbound())
                .as("nothing decoded from the frame's bytes")
                .isNull();
        assertThat(ch.pipeline().get(WebSocketUpgradeGuard.NAME)).isNotNull();
        ch.finishAndReleaseAll();
    }

    @Test
    void aRefusedUpgradeClosesTheConnectionAfterItsAnswerAndReleasesWhatWasHeld() {
        EmbeddedChannel ch = channel();
        ch.writeInbound(ascii(UPGRADE));
        ByteBuf frame = Unpooled.buffer().writeBytes(new byte[] {(byte) 0x81, (byte) 0x80, 1, 2, 3, 4});
        ch.writeInbound(frame.retain());
        ch.readInbound();
        ch.readInbound();
        HttpResponse refused = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.UNAUTHORIZED);
        ch.writeOutbound(refused);
        ch.runPendingTasks();
        assertThat(refused.headers().get(HttpHeaderNames.CONNECTION)).isEqualTo("close");
        assertThat(ch.isOpen()).isFalse();
        assertThat(frame.refCnt()).as("the held bytes released").isOne();
        frame.release();
        ch.finishAndReleaseAll();
    }

    @Test
    void moreThanAMebibyteBeforeTheAnswerClosesTheConnection() {
        EmbeddedChannel ch = channel();
        ch.writeInbound(ascii(UPGRADE));
        ch.writeInbound(Unpooled.wrappedBuffer(new byte[WebSocketUpgradeGuard.MAX_EARLY_BYTES]));
        assertThat(ch.isOpen()).isTrue();
        ch.writeInbound(Unpooled.wrappedBuffer(new byte[1]));
        assertThat(ch.isOpen()).isFalse();
        ch.finishAndReleaseAll();
    }
}
