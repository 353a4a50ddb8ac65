package io.cosched.http.client;

import io.netty.handler.codec.http.HttpObject;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.LastHttpContent;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/**
 * The rest of a response whose reader gave up on it (its coroutine was interrupted: the request it
 * serves was cancelled or timed out). Rather than close the connection, as an interrupted read of a
 * JDK socket would, the loop reads the response to its end and throws it away, and the connection goes
 * back to its loop's connection pool. It is closed instead when the response says the connection ends, cannot be
 * decoded, or has not ended within the idle timeout (a stuck server holds no connection for longer
 * than an idle one would be kept).
 */
final class ResponseDrain implements Predicate<Object> {

    private boolean keepAlive;
    private boolean interim; // inside a 1xx answer: its end is not the response's
    private boolean failed;

    private ResponseDrain(boolean keepAlive) {
        this.keepAlive = keepAlive;
    }

    /**
     * Drains the rest of {@code c}'s response on its loop, then offers it to its connection pool or closes it.
     *
     * @param keepAlive whether the exchange may keep the connection as far as is known (the request's
     *                  headers, and the response's head once it has been read)
     */
    static void start(HttpConnection c, HttpConnectionPool pool, boolean keepAlive, long idleNanos) {
        ResponseDrain drain = new ResponseDrain(keepAlive);
        c.inbox.drain(drain, () -> {
            if (drain.keepAlive && !drain.failed && c.isReusable()) {
                pool.offer(c);
            } else {
                c.close();
            }
        });
        if (c.inbox.isDraining()) {
            c.channel
                    .eventLoop()
                    .schedule(
                            () -> {
                                if (c.inbox.isDraining()) {
                                    c.close(); // no end in sight
                                }
                            },
                            idleNanos,
                            TimeUnit.NANOSECONDS);
        }
    }

    /** Whether {@code msg} ends the response; notes what the response says about the connection. */
    @Override
    public boolean test(Object msg) {
        if (msg instanceof HttpObject o && o.decoderResult().isFailure()) {
            failed = true;
            return true;
        }
        if (msg instanceof HttpResponse head) {
            int code = head.status().code();
            interim = code >= 100 && code < 200 && code != 101;
            if (!interim) {
                keepAlive &= HttpUtil.isKeepAlive(head);
            }
        }
        if (msg instanceof LastHttpContent) {
            if (interim) {
                interim = false; // 100 Continue or 103 Early Hints ended: the answer follows
                return false;
            }
            return true;
        }
        return false;
    }
}
