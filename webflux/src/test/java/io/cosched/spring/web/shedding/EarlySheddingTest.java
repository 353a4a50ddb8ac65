package io.cosched.spring.web.shedding;

import static io.cosched.TestSupport.eventually;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.springframework.web.reactive.function.server.RequestPredicates.GET;
import static org.springframework.web.reactive.function.server.RequestPredicates.path;
import static org.springframework.web.reactive.function.server.RouterFunctions.nest;
import static org.springframework.web.reactive.function.server.RouterFunctions.route;

import io.cosched.IOManager;
import io.cosched.spring.web.CoroutineHandlers;
import io.cosched.spring.web.CoschedWebStats;
import io.cosched.spring.web.server.CoroutineRequests;
import io.cosched.spring.web.stream.StreamLimits;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.util.ReferenceCountUtil;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.web.bind.annotation.RequestMethod;
import org.springframework.web.reactive.HandlerMapping;
import org.springframework.web.reactive.function.server.RouterFunction;
import org.springframework.web.reactive.function.server.ServerResponse;
import org.springframework.web.reactive.function.server.support.RouterFunctionMapping;
import org.springframework.web.reactive.result.method.RequestMappingInfo;
import org.springframework.web.reactive.result.method.annotation.RequestMappingHandlerMapping;
import reactor.core.publisher.Mono;
import reactor.netty.NettyPipeline;

/**
 * Shedding before WebFlux without a server: which routes are surely coroutine routes (annotated and
 * functional, in dispatch order, with the base path), and the pipeline handler behind a real HTTP
 * codec: the 503 it writes, the body it drops, the connection it keeps or closes, and the requests it
 * leaves to WebFlux (a free slot, a response still owed on the connection, no routes read yet).
 */
@Timeout(30)
class EarlySheddingTest {

    private IOManager io;
    private CoroutineRequests requests;
    private EarlyShedding shedding;
    private CoschedWebStats stats;
    private final CountDownLatch release = new CountDownLatch(1);

    @BeforeEach
    void start() {
        io = IOManager.builder().name("shedding").threads(1).build();
        io.start();
        requests = new CoroutineRequests(io, null, 1, true, false, StreamLimits.DEFAULT);
        stats = requests.stats();
        shedding = new EarlyShedding(requests);
    }

    @AfterEach
    void stop() {
        release.countDown();
        io.stop(Duration.ofSeconds(10));
    }

    /** Takes the one in-flight slot with a handler that waits for {@link #freeTheSlot()}. */
    private void takeTheSlot() {
        requests.blockingExecutor().execute(() -> {
            try {
                release.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        eventually(Duration.ofSeconds(10), () -> stats.inFlight() == 1, stats::toString);
    }

    private void freeTheSlot() {
        release.countDown();
        eventually(Duration.ofSeconds(10), () -> stats.inFlight() == 0, stats::toString);
    }

    /** Handlers of the annotated mapping: blocking ones run as coroutines, reactive ones do not. */
    static final class Orders {
        public String order() {
            return "order";
        }

        public Mono<String> live() {
            return Mono.just("live");
        }
    }

    private static RequestMappingHandlerMapping annotated(Object... pathMethodHandler) throws Exception {
        RequestMappingHandlerMapping mapping = new RequestMappingHandlerMapping();
        for (int i = 0; i < pathMethodHandler.length; i += 3) {
            RequestMappingInfo.Builder info = RequestMappingInfo.paths((String) pathMethodHandler[i]);
            if (pathMethodHandler[i + 1] != null) {
                info.methods((RequestMethod) pathMethodHandler[i + 1]);
            }
            mapping.registerMapping(
                    info.build(), new Orders(), Orders.class.getMethod((String) pathMethodHandler[i + 2]));
        }
        return mapping;
    }

    private ShedRoutes routes(String basePath, HandlerMapping... mappings) {
        return ShedRoutes.of(List.of(mappings), requests.selector(), basePath);
    }

    @Test
    void anAnnotatedBlockingRouteIsACoroutineRouteAndAReactiveOneIsNot() throws Exception {
        ShedRoutes r =
                routes("", annotated("/orders/{id}", RequestMethod.GET, "order", "/orders/{id}/live", null, "live"));
        assertThat(r.isCoroutineRequest("GET", "/orders/7")).isTrue();
        assertThat(r.isCoroutineRequest("GET", "/orders/7?expand=lines")).isTrue();
        assertThat(r.isCoroutineRequest("GET", "http://shop.example/orders/7"))
                .as("absolute form")
                .isTrue();
        assertThat(r.isCoroutineRequest("HEAD", "/orders/7"))
                .as("HEAD goes to the GET handler")
                .isTrue();
        assertThat(r.isCoroutineRequest("POST", "/orders/7"))
                .as("no POST route: a 405, not a coroutine")
                .isFalse();
        assertThat(r.isCoroutineRequest("OPTIONS", "/orders/7"))
                .as("a CORS preflight is never shed")
                .isFalse();
        assertThat(r.isCoroutineRequest("GET", "/orders/7/live")).isFalse();
        assertThat(r.isCoroutineRequest("GET", "/unknown")).isFalse();
        assertThat(r.isCoroutineRequest("GET", "*")).isFalse();
    }

    @Test
    void aPathThatAlsoFitsAReactiveRouteOfTheSameMappingIsNotSure() throws Exception {
        // Spring would pick /orders/live (more specific) over /orders/{id}: it is not a coroutine
        ShedRoutes r = routes(
                "", annotated("/orders/{id}", RequestMethod.GET, "order", "/orders/live", RequestMethod.GET, "live"));
        assertThat(r.isCoroutineRequest("GET", "/orders/7")).isTrue();
        assertThat(r.isCoroutineRequest("GET", "/orders/live")).isFalse();
    }

    @Test
    void routerFunctionsComeFirstAndTheirNestedCoroutineRoutesAreRead() throws Exception {
        CoroutineHandlers coroutines = new CoroutineHandlers(requests);
        RouterFunction<ServerResponse> functions = nest(
                path("/api"),
                route(
                                GET("/items/{id}"),
                                coroutines.blocking(req -> ServerResponse.ok().build()))
                        .andRoute(
                                GET("/items/{id}/stream"),
                                req -> ServerResponse.ok().build()));
        ShedRoutes r = routes(
                "", new RouterFunctionMapping(functions), annotated("/api/items/special", RequestMethod.GET, "order"));
        assertThat(r.isCoroutineRequest("GET", "/api/items/7")).isTrue();
        assertThat(r.isCoroutineRequest("GET", "/api/items/7/stream")).isFalse();
        assertThat(r.isCoroutineRequest("GET", "/api/items/special"))
                .as("the router function's /api/items/{id} matches first and decides")
                .isTrue();
        assertThat(r.isCoroutineRequest("GET", "/items/7")).isFalse();
    }

    @Test
    void aBlockingFunctionOfAnotherRunnerIsNoCoroutine() throws Exception {
        CoroutineHandlers elastic = new CoroutineHandlers(reactor.core.scheduler.Schedulers.boundedElastic());
        ShedRoutes r = routes(
                "",
                new RouterFunctionMapping(route(
                        GET("/x"), elastic.blocking(req -> ServerResponse.ok().build()))));
        assertThat(r.isCoroutineRequest("GET", "/x")).isFalse();
        assertThat(r.anyCoroutine()).isFalse();
    }

    @Test
    void aRouteThatCannotBeReadMakesEverythingAfterItUnsure() throws Exception {
        RouterFunction<ServerResponse> opaque =
                route(GET("/a").or(GET("/b")), req -> ServerResponse.ok().build());
        ShedRoutes r =
                routes("", new RouterFunctionMapping(opaque), annotated("/orders/{id}", RequestMethod.GET, "order"));
        assertThat(r.isCoroutineRequest("GET", "/orders/7")).isFalse();
        // after the annotated mapping it changes nothing
        ShedRoutes after =
                routes("", annotated("/orders/{id}", RequestMethod.GET, "order"), new RouterFunctionMapping(opaque));
        assertThat(after.isCoroutineRequest("GET", "/orders/7")).isTrue();
    }

    @Test
    void aNestedPathThatDoesNotJoinItsRouteIntoOnePatternIsUnreadableNotAStartupFailure() throws Exception {
        // "/files/**" + "/{name}" is no pattern Spring can parse: the route may match anything
        RouterFunction<ServerResponse> files = nest(
                path("/files/**"),
                route(GET("/{name}"), req -> ServerResponse.ok().build()));
        ShedRoutes r =
                routes("", new RouterFunctionMapping(files), annotated("/orders/{id}", RequestMethod.GET, "order"));
        assertThat(r.isCoroutineRequest("GET", "/orders/7")).isFalse();
    }

    @Test
    void theBasePathIsStrippedAndRequestsOutsideItAreNotShed() throws Exception {
        ShedRoutes r = routes("/shop/", annotated("/orders/{id}", RequestMethod.GET, "order"));
        assertThat(r.isCoroutineRequest("GET", "/shop/orders/7")).isTrue();
        assertThat(r.isCoroutineRequest("GET", "/orders/7")).isFalse();
        assertThat(r.isCoroutineRequest("GET", "/shopping/orders/7")).isFalse();
    }

    // ---- the pipeline handler ------------------------------------------------------------------

    private EmbeddedChannel channel() throws Exception {
        shedding.useRoutes(List.of(annotated("/orders/{id}", null, "order", "/live", null, "live")), "");
        EmbeddedChannel channel = new EmbeddedChannel();
        channel.pipeline().addLast(NettyPipeline.HttpCodec, new HttpServerCodec());
        shedding.install(channel);
        return channel;
    }

    private static void send(EmbeddedChannel channel, String request) {
        channel.writeInbound(Unpooled.copiedBuffer(request, StandardCharsets.US_ASCII));
    }

    private static String written(EmbeddedChannel channel) {
        StringBuilder out = new StringBuilder();
        for (Object o; (o = channel.readOutbound()) != null; ) {
            ByteBuf b = (ByteBuf) o;
            out.append(b.toString(StandardCharsets.US_ASCII));
            b.release();
        }
        return out.toString();
    }

    /** What reached the handlers behind: request lines, and the bytes of body parts. */
    private static String passedOn(EmbeddedChannel channel) {
        StringBuilder in = new StringBuilder();
        for (Object o; (o = channel.readInbound()) != null; ) {
            if (o instanceof HttpRequest r) {
                in.append(r.method()).append(' ').append(r.uri()).append(';');
            }
            if (o instanceof HttpContent c) {
                in.append(c.content().toString(StandardCharsets.US_ASCII));
            }
            ReferenceCountUtil.release(o);
        }
        return in.toString();
    }

    /** With a Retry-After range, the shed answers spread over it: a burst's clients do not all come back at once. */
    @Test
    void shedAnswersDrawTheirRetryAfterFromOneSecondToTheMax() throws Exception {
        requests = new CoroutineRequests(io, null, 1, true, false, StreamLimits.DEFAULT, Duration.ofSeconds(3));
        stats = requests.stats();
        shedding = new EarlyShedding(requests);
        EmbeddedChannel channel = channel();
        takeTheSlot();
        java.util.Set<String> seen = new java.util.TreeSet<>();
        for (int i = 0; i < 60; i++) {
            send(channel, "GET /orders/" + i + " HTTP/1.1\r\nHost: x\r\n\r\n");
            java.util.regex.Matcher m =
                    java.util.regex.Pattern.compile("retry-after: (\\d+)\r\n").matcher(written(channel));
            assertThat(m.find()).isTrue();
            seen.add(m.group(1));
        }
        // 60 draws from three values: all three seen but for a chance of 3 x (2/3)^60, about 1e-10
        assertThat(seen).containsExactly("1", "2", "3");
        assertThat(stats.shedEarly()).isEqualTo(60);
        assertThatThrownBy(() ->
                        new CoroutineRequests(io, null, 1, true, false, StreamLimits.DEFAULT, Duration.ofMillis(500)))
                .hasMessage("retryAfterMax: PT0.5S (expected: from 1 s to 1 h)");
    }

    @Test
    void whileFullACoroutineRequestIsAnswered503HereAndItsBodyDropped() throws Exception {
        EmbeddedChannel channel = channel();
        takeTheSlot();
        send(channel, "POST /orders/7 HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n01234");
        String response = written(channel);
        assertThat(response)
                .startsWith("HTTP/1.1 503 Service Unavailable\r\n")
                .contains("retry-after: 1\r\n")
                .contains("content-type: application/problem+json\r\n")
                .endsWith("\"detail\":\"too many requests in flight (cosched.web.max-in-flight: 1)\"}")
                .doesNotContain("connection: close");
        send(channel, "56789");
        assertThat(passedOn(channel))
                .as("neither the request nor its body went on")
                .isEmpty();
        assertThat(stats.shed()).isEqualTo(1);
        assertThat(stats.shedEarly()).isEqualTo(1);

        // the connection goes on: a reactive route's request passes, full or not
        send(channel, "GET /live HTTP/1.1\r\nHost: x\r\n\r\n");
        assertThat(passedOn(channel)).isEqualTo("GET /live;");
        assertThat(channel.isOpen()).isTrue();
        channel.finishAndReleaseAll();
    }

    @Test
    void withASlotFreeOrNoRoutesReadEverythingGoesOnToWebFlux() throws Exception {
        EmbeddedChannel notRead = new EmbeddedChannel();
        notRead.pipeline().addLast(NettyPipeline.HttpCodec, new HttpServerCodec());
        shedding.install(notRead);
        takeTheSlot();
        send(notRead, "GET /orders/7 HTTP/1.1\r\nHost: x\r\n\r\n");
        assertThat(passedOn(notRead)).as("routes not read yet").isEqualTo("GET /orders/7;");
        notRead.finishAndReleaseAll();

        freeTheSlot();
        EmbeddedChannel channel = channel();
        send(channel, "GET /orders/7 HTTP/1.1\r\nHost: x\r\n\r\n");
        assertThat(passedOn(channel)).as("a slot is free").isEqualTo("GET /orders/7;");
        assertThat(written(channel)).isEmpty();
        assertThat(stats.shedEarly()).isZero();
        channel.finishAndReleaseAll();
    }

    @Test
    void aRequestBehindAnUnansweredOneOnTheSameConnectionIsLeftToWebFlux() throws Exception {
        EmbeddedChannel channel = channel();
        send(channel, "GET /orders/1 HTTP/1.1\r\nHost: x\r\n\r\n");
        assertThat(passedOn(channel)).isEqualTo("GET /orders/1;");
        takeTheSlot(); // now full, the first still unanswered
        send(channel, "GET /orders/2 HTTP/1.1\r\nHost: x\r\n\r\n");
        assertThat(passedOn(channel))
                .as("a 503 now would overtake the first response")
                .isEqualTo("GET /orders/2;");

        // both answered by the application: the next one is shed here
        channel.writeOutbound(new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK));
        channel.writeOutbound(new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK));
        written(channel);
        send(channel, "GET /orders/3 HTTP/1.1\r\nHost: x\r\n\r\n");
        assertThat(passedOn(channel)).isEmpty();
        assertThat(written(channel)).startsWith("HTTP/1.1 503 ");
        channel.finishAndReleaseAll();
    }

    @Test
    void aRequestAskingToCloseGetsItsAnswerAndTheConnectionCloses() throws Exception {
        EmbeddedChannel channel = channel();
        takeTheSlot();
        send(channel, "GET /orders/7 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
        assertThat(written(channel)).startsWith("HTTP/1.1 503 ").contains("connection: close\r\n");
        channel.runPendingTasks();
        assertThat(channel.isOpen()).isFalse();
        channel.finishAndReleaseAll();

        // HTTP/1.0 keeps the connection only when asked to, and is told so
        EmbeddedChannel old = channel();
        send(old, "GET /orders/7 HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
        assertThat(written(old)).startsWith("HTTP/1.0 503 ").contains("connection: keep-alive\r\n");
        assertThat(old.isOpen()).isTrue();
        old.finishAndReleaseAll();

        // a client waiting for 100 Continue: whether its body follows is unknown, so the connection ends
        EmbeddedChannel expecting = channel();
        send(expecting, "POST /orders/7 HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n");
        assertThat(written(expecting)).startsWith("HTTP/1.1 503 ").contains("connection: close\r\n");
        expecting.runPendingTasks();
        assertThat(expecting.isOpen()).isFalse();
        expecting.finishAndReleaseAll();
    }
}
