package io.cosched.http.client;

import io.cosched.netty.NettyBlocking;
import io.cosched.netty.NettyInbox;
import io.netty.channel.ChannelFuture;
import io.netty.channel.EventLoop;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpObject;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.handler.ssl.SslHandler;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.ScheduledFuture;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * One exchange started with {@link LoopHttpClient#start}: the request goes out and the answer is read
 * on one event loop, with nobody parked. Its state belongs to that loop; {@link #demand} and
 * {@link #cancel} may be called from any thread and take effect there.
 *
 * <p>Once the head has been handed over the body is read only as far as it is demanded: what the
 * caller does not want yet waits in the connection's inbox, which stops reading from the socket past
 * its high water mark, so a slow consumer holds the server back through TCP. A cancelled exchange
 * leaves the rest of its answer to the loop, which reads it to its end and puts the connection back in its connection pool, as an
 * interrupted blocking call does.
 */
public final class LoopExchange {

    private final LoopHttpClient client;
    private final int loopIndex;
    private final EventLoop eventLoop;
    private final HttpConnectionPool pool;
    private final ExchangeHandler handler;
    private final long readNanos;
    private final Runnable readable = this::readable;
    private volatile boolean cancelled;

    // confined to the loop once begun
    private HttpCall call;
    private int redirects;
    private @Nullable HttpConnection connection;
    private boolean keepAlive;
    private boolean interim; // reading the rest of a 1xx answer
    private @Nullable HttpResponse head; // the final answer's head, once handed over
    private long demand;
    private boolean pumping;
    private boolean again;
    private boolean done; // ended, failed or cancelled: the handler hears nothing more
    private long lastRead;
    private @Nullable ScheduledFuture<?> readTimer;

    LoopExchange(
            LoopHttpClient client, int loopIndex, HttpConnectionPool pool, HttpCall call, ExchangeHandler handler) {
        this.client = client;
        this.loopIndex = loopIndex;
        this.eventLoop = client.ioManager().eventLoop(loopIndex);
        this.pool = pool;
        this.call = call;
        this.handler = handler;
        this.readNanos = client.readNanos();
    }

    /** The loop the exchange runs on: index into the IOManager's loops. */
    public int loopIndex() {
        return loopIndex;
    }

    /** The final answer's status code; only once {@link ExchangeHandler#onResponse} has been told. */
    public int status() {
        return head().status().code();
    }

    /** The reason phrase of the final answer's status line. */
    public String reason() {
        return head().status().reasonPhrase();
    }

    /** The final answer's headers, as received. */
    public HttpHeaders headers() {
        return head().headers();
    }

    /** The final answer's head as Netty decoded it. */
    public HttpResponse head() {
        HttpResponse h = head;
        if (h == null) {
            throw new IllegalStateException(
                    "no answer yet: the head is there once ExchangeHandler.onResponse has been told");
        }
        return h;
    }

    /** Asks for {@code n} more pieces of the body ({@code n > 0}); {@link Long#MAX_VALUE}: all of it. */
    public void demand(long n) {
        if (n <= 0) {
            throw new IllegalArgumentException("n: " + n + " (expected: > 0)");
        }
        onLoop(() -> {
            if (!done) {
                long d = demand + n;
                demand = d < 0 ? Long.MAX_VALUE : d;
                readable();
            }
        });
    }

    /**
     * Gives the exchange up: the handler hears nothing more, and the rest of the answer is read to its
     * end on the loop and thrown away, keeping the connection (closed instead if it has not ended
     * within the client's idle timeout). Nothing happens when the exchange has ended already.
     */
    public void cancel() {
        cancelled = true;
        onLoop(() -> {
            if (done) {
                return;
            }
            HttpConnection c = end();
            if (c != null) {
                ResponseDrain.start(c, pool, keepAlive, client.idleNanos());
            }
            // still connecting: connected() sees the cancel and offers the new connection to its connection pool
        });
    }

    // ---- sending -----------------------------------------------------------------------------------

    /** On the caller's thread: a pooled connection, or a new one, then the request, on the loop. */
    void begin(HttpConnection.Key key) {
        HttpConnection pooled = pool.poll(key);
        if (pooled != null) {
            onLoop(() -> send(pooled));
            return;
        }
        if (eventLoop.inEventLoop()) {
            // a name lookup may block: not on the loop (a redirect to another host, a retry)
            Thread.ofVirtual().name("cosched-http-resolve").start(() -> resolveAndOpen(key));
        } else {
            resolveAndOpen(key);
        }
    }

    private void resolveAndOpen(HttpConnection.Key key) {
        InetSocketAddress address;
        try {
            address = new InetSocketAddress(client.connector().resolve(key.host()), key.port());
        } catch (IOException e) {
            onLoop(() -> fail(e));
            return;
        }
        open(key, address);
    }

    /** Opens a connection to {@code address} on the loop; any thread. */
    private void open(HttpConnection.Key key, SocketAddress address) {
        NettyInbox inbox = HttpConnector.newInbox();
        SslHandler ssl;
        try {
            ssl = key.tls() ? client.connector().sslHandler(key) : null;
        } catch (IOException e) {
            onLoop(() -> fail(e));
            return;
        }
        ChannelFuture f = client.connector().bootstrap(loopIndex, inbox, ssl).connect(address);
        f.addListener(x -> connected(f, key, address, inbox, ssl));
    }

    /** On the loop: the connect ended. */
    private void connected(
            ChannelFuture f,
            HttpConnection.Key key,
            SocketAddress address,
            NettyInbox inbox,
            @Nullable SslHandler ssl) {
        if (!f.isSuccess()) {
            f.channel().close();
            fail(NettyBlocking.connectFailure(f.cause(), address));
            return;
        }
        HttpConnection c = client.connector().opened(key, loopIndex, f.channel(), inbox, pool);
        if (ssl == null) {
            send(c);
            return;
        }
        ssl.handshakeFuture().addListener(h -> {
            if (h.isSuccess()) {
                send(c);
            } else {
                c.close();
                fail(HttpConnector.handshakeFailed(key, h.cause()));
            }
        });
    }

    /** On the loop: the request goes out on {@code c}, whose answers this exchange now reads. */
    private void send(HttpConnection c) {
        if (done || cancelled) {
            done = true;
            if (c.isReusable()) {
                pool.offer(c); // nobody wants it any more; it never carried a request
            } else {
                c.close();
            }
            return;
        }
        connection = c;
        c.uses++;
        keepAlive = call.keepsAlive();
        interim = false;
        c.inbox.listen(readable);
        lastRead = System.nanoTime();
        if (readNanos > 0 && readTimer == null) {
            readTimer = eventLoop.schedule(this::checkRead, readNanos, TimeUnit.NANOSECONDS);
        }
        c.channel.writeAndFlush(call.toRequest(c.key), c.channel.voidPromise());
        readable(); // the connection may have ended between the connection pool and the listening
    }

    // ---- receiving ---------------------------------------------------------------------------------

    /** On the loop, whenever the inbox has news or demand grew; re-entered calls (from the handler) loop here. */
    private void readable() {
        if (pumping) {
            again = true;
            return;
        }
        pumping = true;
        try {
            do {
                again = false;
                pump();
            } while (again);
        } finally {
            pumping = false;
        }
    }

    private void pump() {
        for (; ; ) {
            HttpConnection c = connection;
            if (done || c == null) {
                return;
            }
            if (head == null) {
                if (!readHead(c)) {
                    return;
                }
                continue;
            }
            if (demand == 0) {
                return;
            }
            Object msg = c.inbox.poll();
            if (msg == null) {
                if (c.inbox.isEnded()) {
                    IOException cause = c.inbox.failure();
                    c.close();
                    fail(
                            cause != null
                                    ? new IOException(cause.getMessage(), cause)
                                    : new IOException("Premature EOF: " + c.key
                                            + " closed the connection before the end of the response body"));
                }
                return;
            }
            lastRead = System.nanoTime();
            if (!(msg instanceof HttpContent content) || content.decoderResult().isFailure()) {
                failOn(c, msg);
                return;
            }
            boolean last = msg instanceof LastHttpContent;
            if (last) {
                finish(c);
            }
            if (content.content().isReadable()) {
                demand--;
                handler.onContent(content.content());
            } else {
                content.release();
            }
            if (last && !done) {
                done = true;
                handler.onEnd();
            }
        }
    }

    /** Reads toward the final head; whether to go on (something was taken and nothing ended). */
    private boolean readHead(HttpConnection c) {
        Object msg = c.inbox.poll();
        if (msg == null) {
            if (c.inbox.isEnded()) {
                endedBeforeHead(c);
            }
            return false;
        }
        lastRead = System.nanoTime();
        if (msg instanceof HttpObject o && o.decoderResult().isFailure()) {
            failOn(c, msg);
            return false;
        }
        if (interim) {
            interim = !(msg instanceof LastHttpContent);
            ReferenceCountUtil.release(msg);
            return true;
        }
        if (!(msg instanceof HttpResponse h)) {
            failOn(c, msg);
            return false;
        }
        int code = h.status().code();
        if (code >= 100 && code < 200 && code != 101) {
            interim = !(msg instanceof LastHttpContent); // 100 Continue, 103 Early Hints: the answer follows
            ReferenceCountUtil.release(msg);
            return true;
        }
        keepAlive &= HttpUtil.isKeepAlive(h);
        HttpCall next = client.redirect(call, redirects, code, h.headers());
        if (next != null) {
            ReferenceCountUtil.release(msg);
            connection = null;
            ResponseDrain.start(
                    c, pool, keepAlive, client.idleNanos()); // the rest of the redirect is read and thrown away
            redirects++;
            call = next;
            begin(HttpConnection.Key.of(call.uri()));
            return false;
        }
        head = h;
        handler.onResponse(this);
        return true;
    }

    /** The connection ended before the final head: a stale pooled connection is retried, anything else fails. */
    private void endedBeforeHead(HttpConnection c) {
        IOException cause = c.inbox.failure();
        c.close();
        connection = null;
        if (c.uses > 1 && call.idempotent() && !interim) {
            // the server closed a pooled connection before it saw the request: once more on a new one
            SocketAddress address = c.channel.remoteAddress();
            if (address != null) {
                open(c.key, address);
                return;
            }
            begin(c.key);
            return;
        }
        fail(
                cause != null
                        ? new IOException(cause.getMessage(), cause)
                        : new SocketException("Unexpected end of file from server"));
    }

    /** The answer is not HTTP as expected: the connection ends. */
    private void failOn(HttpConnection c, Object msg) {
        String what = msg instanceof HttpObject o && o.decoderResult().isFailure()
                ? "invalid HTTP response from " + c.key + ": "
                        + o.decoderResult().cause().getMessage()
                : "unexpected " + msg.getClass().getSimpleName() + " in the response from " + c.key;
        Throwable cause = msg instanceof HttpObject o ? o.decoderResult().cause() : null;
        ReferenceCountUtil.release(msg);
        c.close();
        fail(new IOException(what, cause));
    }

    /** After the last piece of the body: the connection carries the next exchange, or closes. */
    private void finish(HttpConnection c) {
        connection = null;
        stopReadTimer();
        c.inbox.listen(null);
        if (keepAlive && c.isReusable()) {
            pool.offer(c);
        } else {
            c.close();
        }
    }

    private void fail(IOException error) {
        if (done) {
            return;
        }
        HttpConnection c = end();
        if (c != null) {
            c.inbox.listen(null);
            c.close();
        }
        if (!cancelled) {
            handler.onError(error);
        }
    }

    /** The exchange is over, whichever way: the handler hears nothing more; its connection, if any, is the caller's. */
    private @Nullable HttpConnection end() {
        done = true;
        stopReadTimer();
        HttpConnection c = connection;
        connection = null;
        return c;
    }

    // ---- the read timeout --------------------------------------------------------------------------

    /**
     * On the loop, a read timeout after the last read: fails the exchange if the server has said nothing
     * for that long while it was waited on (connecting is the connect timeout's; a body nobody asks for is
     * not waited on), else looks again when the rest of the time is up.
     */
    private void checkRead() {
        readTimer = null;
        if (done) {
            return;
        }
        long now = System.nanoTime();
        boolean waiting = connection != null && (head == null || demand > 0);
        long idle = waiting ? now - lastRead : 0;
        if (idle >= readNanos) {
            fail(new SocketTimeoutException("Read timed out"));
            return;
        }
        if (!waiting) {
            lastRead = now;
        }
        readTimer = eventLoop.schedule(this::checkRead, readNanos - idle, TimeUnit.NANOSECONDS);
    }

    private void stopReadTimer() {
        ScheduledFuture<?> t = readTimer;
        readTimer = null;
        if (t != null) {
            t.cancel(false);
        }
    }

    private void onLoop(Runnable task) {
        if (eventLoop.inEventLoop()) {
            task.run();
            return;
        }
        try {
            eventLoop.execute(task);
        } catch (RejectedExecutionException stopped) {
            if (!done && !cancelled) {
                done = true;
                handler.onError(new IOException(
                        "event loop " + loopIndex + " of IOManager '"
                                + client.ioManager().name() + "' is shutting down: " + stopped.getMessage(),
                        stopped));
            }
        }
    }

    @Override
    public String toString() {
        return "LoopExchange[" + call.method() + " " + call.uri() + ", loop " + loopIndex + "]";
    }
}
