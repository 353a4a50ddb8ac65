package io.cosched.spring.web.stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cosched.spring.web.MultipartStream;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.UnpooledByteBufAllocator;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Random;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.core.codec.DecodingException;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferLimitException;
import org.springframework.core.io.buffer.NettyDataBuffer;
import org.springframework.core.io.buffer.NettyDataBufferFactory;
import org.springframework.http.MediaType;

/**
 * The blocking multipart parser over a body delivered in buffers of every size (1 byte up to more than its window),
 * so that boundaries, header ends and delimiters fall across buffers: the parts it finds, Spring's limits, and every
 * buffer released whether the body is read to the end, a part is skipped, a limit is passed or the reader stops.
 */
@Timeout(10)
class StreamedPartsTest {

    private static final NettyDataBufferFactory BUFFERS =
            new NettyDataBufferFactory(new UnpooledByteBufAllocator(false));
    private static final int[] CHUNKS = {1, 2, 3, 7, 13, 64, 1000, 8192, 40_000};

    private final List<ByteBuf> delivered = new ArrayList<>();
    private boolean sourceClosed;

    @Test
    void findsEachPartWhereverTheBuffersSplitTheBody() throws IOException {
        String file = randomText(50_000, 1);
        String body = "preamble to ignore\r\n" + field("title", "Prices, 2026") + file("data", "prices.csv", file)
                + part("Content-Disposition: form-data; name=\"empty\"\r\n", "")
                + "--XyZ--\r\nan epilogue\r\n";
        for (int chunk : CHUNKS) {
            StreamedParts parts = parse(body, chunk, MultipartLimits.springDefaults(), 256 * 1024);
            MultipartStream.Part title = parts.next();
            assertThat(title.name()).isEqualTo("title");
            assertThat(title.filename()).isNull();
            assertThat(title.value()).as("chunks of " + chunk).isEqualTo("Prices, 2026");
            MultipartStream.Part data = parts.next();
            assertThat(data.filename()).isEqualTo("prices.csv");
            assertThat(data.headers().getContentType()).isEqualTo(MediaType.parseMediaType("text/csv"));
            try (InputStream in = data.inputStream()) {
                assertThat(new String(in.readAllBytes(), StandardCharsets.UTF_8))
                        .as("chunks of " + chunk)
                        .isEqualTo(file);
            }
            MultipartStream.Part empty = parts.next();
            assertThat(empty.name()).isEqualTo("empty");
            assertThat(empty.value()).isEmpty();
            assertThat(parts.next()).isNull();
            assertThat(parts.next()).isNull();
            assertAllReleased("chunks of " + chunk);
            assertThat(sourceClosed).as("read to its end, not dropped").isFalse();
        }
    }

    @Test
    void contentThatLooksLikeTheBoundaryIsContent() throws IOException {
        String tricky = "\r\n--XY\r\n--Xy\r-\n--XyY\r\n-\r\n--Xy";
        String body = file("f", "a.bin", tricky) + "--XyZ--\r\n";
        for (int chunk : CHUNKS) {
            StreamedParts parts = parse(body, chunk, MultipartLimits.springDefaults(), -1);
            try (InputStream in = parts.next().inputStream()) {
                assertThat(new String(in.readAllBytes(), StandardCharsets.US_ASCII))
                        .as("chunks of " + chunk)
                        .isEqualTo(tricky);
            }
            assertThat(parts.next()).isNull();
            assertAllReleased("chunks of " + chunk);
        }
    }

    @Test
    void partsNotReadAreSkippedAndReleased() throws IOException {
        String body = file("a", "a.csv", randomText(30_000, 2)) + file("b", "b.csv", "second") + "--XyZ--\r\n";
        for (int chunk : CHUNKS) {
            StreamedParts parts = parse(body, chunk, MultipartLimits.springDefaults(), -1);
            MultipartStream.Part a = parts.next();
            InputStream half = a.inputStream();
            assertThat(half.readNBytes(100)).hasSize(100);
            MultipartStream.Part b = parts.next();
            assertThatThrownBy(half::read).isInstanceOf(IOException.class).hasMessageContaining("moved on");
            assertThatThrownBy(a::inputStream).isInstanceOf(IllegalStateException.class);
            assertThat(new String(b.inputStream().readAllBytes(), StandardCharsets.UTF_8))
                    .isEqualTo("second");
            assertThat(parts.next()).isNull();
            assertAllReleased("chunks of " + chunk);
        }
    }

    @Test
    void aFilePartOverItsLimitFailsAsSpringsLimitAndReleasesTheBody() throws IOException {
        String body = file("file", "big.csv", "x".repeat(5_000)) + file("next", "n.csv", "y") + "--XyZ--\r\n";
        MultipartLimits limits = new MultipartLimits(-1, 10 * 1024, 4_096, StandardCharsets.UTF_8);
        for (int chunk : CHUNKS) {
            StreamedParts parts = parse(body, chunk, limits, 256 * 1024);
            InputStream in = parts.next().inputStream();
            assertThatThrownBy(in::readAllBytes)
                    .isInstanceOf(BodyReadException.class)
                    .hasCauseInstanceOf(DataBufferLimitException.class)
                    .hasMessageContaining("Part 'file' exceeded the limit of 4096 bytes")
                    .hasMessageContaining("spring.webflux.multipart.max-disk-usage-per-part");
            assertThatThrownBy(parts::next).isInstanceOf(BodyReadException.class);
            assertThat(sourceClosed).as("the body dropped at once").isTrue();
            assertAllReleased("chunks of " + chunk);
        }
        // a part at its limit passes; skipping a part over it fails as reading it does
        StreamedParts exact = parse(file("file", "f.csv", "x".repeat(4_096)) + "--XyZ--\r\n", 100, limits, -1);
        assertThat(exact.next().inputStream().readAllBytes()).hasSize(4_096);
        assertThat(exact.next()).isNull();
        StreamedParts skipped = parse(body, 100, limits, -1);
        skipped.next();
        assertThatThrownBy(skipped::next).hasCauseInstanceOf(DataBufferLimitException.class);
        assertAllReleased("skipped");
    }

    @Test
    void formFieldsHeadersAndPartCountHaveSpringsLimits() throws IOException {
        MultipartLimits twoParts = new MultipartLimits(2, 200, -1, StandardCharsets.UTF_8);
        StreamedParts tooMany =
                parse(field("a", "1") + field("b", "2") + field("c", "3") + "--XyZ--\r\n", 5, twoParts, -1);
        tooMany.next().value();
        tooMany.next().value();
        assertThatThrownBy(tooMany::next)
                .hasCauseInstanceOf(DecodingException.class)
                .hasMessageContaining("Too many parts (3/2 allowed");

        StreamedParts field = parse(field("title", "z".repeat(101)) + "--XyZ--\r\n", 7, twoParts, 100);
        assertThatThrownBy(() -> field.next().value())
                .hasCauseInstanceOf(DataBufferLimitException.class)
                .hasMessageContaining("Form field 'title' exceeded the limit of 100 bytes")
                .hasMessageContaining("max-in-memory-size");

        String longHeader =
                part("Content-Disposition: form-data; name=\"h\"\r\nX-Note: " + "n".repeat(300) + "\r\n", "v");
        for (int chunk : CHUNKS) {
            StreamedParts headers = parse(longHeader + "--XyZ--\r\n", chunk, twoParts, -1);
            assertThatThrownBy(headers::next)
                    .hasCauseInstanceOf(DataBufferLimitException.class)
                    .hasMessageContaining("max-headers-size");
        }
        assertAllReleased("limits");
    }

    @Test
    void malformedBodiesFailAsDecodingErrors() throws IOException {
        assertThatThrownBy(() -> parse("no boundary here", 4, MultipartLimits.springDefaults(), -1)
                        .next())
                .hasCauseInstanceOf(DecodingException.class)
                .hasMessageContaining("first boundary");
        StreamedParts cut = parse(file("f", "f.csv", "cut in the mid"), 4, MultipartLimits.springDefaults(), -1);
        InputStream in = cut.next().inputStream();
        assertThatThrownBy(in::readAllBytes)
                .hasCauseInstanceOf(DecodingException.class)
                .hasMessageContaining("Could not find end of body");
        StreamedParts noHeadersEnd = parse(
                "--XyZ\r\nContent-Disposition: form-data; name=\"a\"\r\n", 4, MultipartLimits.springDefaults(), -1);
        assertThatThrownBy(noHeadersEnd::next).hasMessageContaining("end of headers");
        assertAllReleased("malformed");
    }

    @Test
    void aReaderThatStopsReleasesWhatItHeld() throws IOException {
        StreamedParts parts = parse(
                file("f", "f.csv", randomText(20_000, 3)) + "--XyZ--\r\n", 8192, MultipartLimits.springDefaults(), -1);
        parts.next().inputStream().readNBytes(10);
        lastBody.close(); // what the request's end does
        assertAllReleased("stopped");
    }

    @Test
    void theBoundaryComesFromTheContentTypeUnquoted() {
        assertThat(StreamedParts.boundary(MediaType.parseMediaType("multipart/form-data; boundary=\"a b\"")))
                .isEqualTo("a b");
        assertThat(StreamedParts.boundary(MediaType.parseMediaType("multipart/form-data; boundary=XyZ")))
                .isEqualTo("XyZ");
        assertThat(StreamedParts.boundary(MediaType.MULTIPART_FORM_DATA)).isNull();
    }

    @Test
    void limitsNameTheirPropertyWhenWrong() {
        assertThatThrownBy(() -> new MultipartLimits(-1, 0, -1, StandardCharsets.UTF_8))
                .hasMessage("spring.webflux.multipart.max-headers-size: 0 bytes (expected: > 0)");
        assertThatThrownBy(() -> new MultipartLimits(-1, 10, -2, StandardCharsets.UTF_8))
                .hasMessage(
                        "spring.webflux.multipart.max-disk-usage-per-part: -2 bytes (expected: >= 0, or -1 for no limit)");
    }

    // ---- helpers

    private BodyInputStream streamOf(String body, int chunk) {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        Deque<DataBuffer> queue = new ArrayDeque<>();
        for (int i = 0; i < bytes.length; i += chunk) {
            NettyDataBuffer b = BUFFERS.allocateBuffer(chunk);
            b.write(bytes, i, Math.min(chunk, bytes.length - i));
            delivered.add(b.getNativeBuffer());
            queue.add(b);
        }
        sourceClosed = false;
        return new BodyInputStream(new BodyInputStream.Source() {
            @Override
            public @Nullable DataBuffer next() {
                return queue.poll();
            }

            @Override
            public void close() {
                sourceClosed = true;
                DataBuffer b;
                while ((b = queue.poll()) != null) {
                    org.springframework.core.io.buffer.DataBufferUtils.release(b);
                }
            }
        });
    }

    private BodyInputStream lastBody;

    private StreamedParts parse(String body, int chunk, MultipartLimits limits, int maxInMemorySize) {
        lastBody = streamOf(body, chunk);
        return new StreamedParts(lastBody, "XyZ", limits, maxInMemorySize);
    }

    private void assertAllReleased(String what) {
        if (lastBody != null) {
            lastBody.close(); // what the request's end does: releases what is still queued
        }
        assertThat(delivered).as(what).allSatisfy(b -> assertThat(b.refCnt()).isZero());
        delivered.clear();
    }

    private static String field(String name, String value) {
        return part("Content-Disposition: form-data; name=\"" + name + "\"\r\n", value);
    }

    private static String file(String name, String filename, String content) {
        return part(
                "Content-Disposition: form-data; name=\"" + name + "\"; filename=\"" + filename
                        + "\"\r\nContent-Type: text/csv\r\n",
                content);
    }

    private static String part(String headers, String content) {
        return "--XyZ\r\n" + headers + "\r\n" + content + "\r\n";
    }

    private static String randomText(int length, long seed) {
        Random r = new Random(seed);
        StringBuilder s = new StringBuilder(length);
        String alphabet = "abc,;\r\n-XyZ0123456789";
        while (s.length() < length) {
            s.append(alphabet.charAt(r.nextInt(alphabet.length())));
        }
        return s.toString();
    }
}
