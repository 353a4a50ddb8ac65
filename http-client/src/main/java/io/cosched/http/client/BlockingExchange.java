package io.cosched.http.client;

import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.ReferenceCountUtil;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.nio.channels.ClosedByInterruptException;
import org.jspecify.annotations.Nullable;

/**
 * {@link LoopHttpClient#exchange}'s one request without redirects: over a pooled connection of the caller's loop,
 * or a new one opened there, parking the caller until the head of the final answer has arrived. A pooled
 * connection the server closed meanwhile fails before any answer, and an idempotent request is sent again on the
 * next; a caller interrupted while it waits leaves the rest of the answer to the loop, which keeps the connection.
 */
final class BlockingExchange {

    private BlockingExchange() {}

    static LoopHttpResponse once(HttpConnector connector, HttpCall call, long readNanos, long idleNanos)
            throws IOException {
        HttpConnection.Key key = HttpConnection.Key.of(call.uri());
        int loopIndex;
        try {
            loopIndex = connector.io().loopIndexForCaller();
        } catch (IllegalStateException e) {
            throw new IOException(e.getMessage(), e);
        }
        HttpConnectionPool pool = connector.pools()[loopIndex];
        boolean callerKeepsAlive = call.keepsAlive();
        for (; ; ) {
            HttpConnection c = pool.poll(key);
            if (c == null) {
                c = connector.connect(key, loopIndex, pool);
            }
            // A pooled connection the server closed meanwhile fails before any answer: try the next.
            boolean mayRetry = ++c.uses > 1 && call.idempotent();
            try {
                c.channel.writeAndFlush(call.toRequest(key), c.channel.voidPromise());
                HttpResponse head = readHead(c, readNanos);
                if (head != null) {
                    boolean keepAlive = HttpUtil.isKeepAlive(head) && callerKeepsAlive;
                    return new LoopHttpResponse(pool, c, head, keepAlive, readNanos, idleNanos);
                }
                c.close();
                if (!mayRetry) {
                    throw new SocketException("Unexpected end of file from server");
                }
            } catch (SocketTimeoutException | ClosedByInterruptException e) {
                c.close();
                throw e;
            } catch (InterruptedIOException e) {
                // the caller was interrupted (its request cancelled): the loop reads the answer to its end
                // and keeps the connection
                ResponseDrain.start(c, pool, callerKeepsAlive, idleNanos);
                throw e;
            } catch (IOException e) {
                c.close();
                if (!mayRetry) {
                    throw e;
                }
            }
        }
    }

    /** The head of the final response (interim 1xx answers skipped), or {@code null} if the connection ended first. */
    private static @Nullable HttpResponse readHead(HttpConnection c, long readNanos) throws IOException {
        for (; ; ) {
            Object msg = c.inbox.take(readNanos);
            if (msg == null) {
                return null;
            }
            c.checkDecoded(msg);
            if (msg instanceof HttpResponse head) {
                int code = head.status().code();
                if (code >= 100 && code < 200 && code != 101) {
                    skipRest(c, readNanos); // 100 Continue, 103 Early Hints: the answer follows
                    continue;
                }
                return head;
            }
            ReferenceCountUtil.release(msg);
            throw new IOException("HTTP response from " + c.key + " without a status line");
        }
    }

    private static void skipRest(HttpConnection c, long readNanos) throws IOException {
        for (; ; ) {
            Object msg = c.inbox.take(readNanos);
            if (msg == null) {
                return;
            }
            c.checkDecoded(msg);
            boolean last = msg instanceof LastHttpContent;
            ReferenceCountUtil.release(msg);
            if (last) {
                return;
            }
        }
    }
}
