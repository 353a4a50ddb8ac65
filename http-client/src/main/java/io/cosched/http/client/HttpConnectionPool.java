package io.cosched.http.client;

import io.netty.channel.EventLoop;
import io.netty.util.concurrent.ScheduledFuture;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * The idle connections of one event loop, by where they lead. Connections never move to another
 * loop: a coroutine takes one of its own loop, so the loop that reads the response is
 * the thread that resumes it. Used by the coroutines homed on the loop and by the loop itself
 * (closing, sweeping), under one uncontended lock.
 *
 * <p>A connection idle for longer than the idle timeout is closed, by a sweep that runs on the loop
 * only while connections wait, so a pool nobody uses any more holds no timer and no socket.
 */
final class HttpConnectionPool {

    private final EventLoop loop;
    private final long idleTimeoutNanos;
    private final Map<HttpConnection.Key, ArrayDeque<HttpConnection>> idle = new HashMap<>();
    private int idleCount;
    private @Nullable ScheduledFuture<?> sweeper; // set while connections wait
    private boolean closed;

    HttpConnectionPool(EventLoop loop, long idleTimeoutNanos) {
        this.loop = loop;
        this.idleTimeoutNanos = idleTimeoutNanos;
    }

    /** An idle connection to {@code key} that is still usable, the most recently used first; or {@code null}. */
    @Nullable
    HttpConnection poll(HttpConnection.Key key) {
        List<HttpConnection> stale = null;
        HttpConnection found = null;
        synchronized (this) {
            ArrayDeque<HttpConnection> q = idle.get(key);
            if (q == null) {
                return null;
            }
            long now = System.nanoTime();
            HttpConnection c;
            while ((c = q.pollLast()) != null) {
                idleCount--;
                c.pooled = false;
                if (now - c.idleSince < idleTimeoutNanos && c.isReusable()) {
                    found = c;
                    break;
                }
                stale = add(stale, c);
            }
        }
        closeAll(stale);
        return found;
    }

    /** Takes back a connection whose exchange ended cleanly; it waits for the next one. */
    void offer(HttpConnection c) {
        synchronized (this) {
            if (!closed) {
                c.pooled = true;
                c.idleSince = System.nanoTime();
                idle.computeIfAbsent(c.key, k -> new ArrayDeque<>()).addLast(c);
                idleCount++;
                if (sweeper == null) {
                    long period = Math.max(TimeUnit.MILLISECONDS.toNanos(100), idleTimeoutNanos / 2);
                    try {
                        sweeper = loop.scheduleAtFixedRate(this::sweep, period, period, TimeUnit.NANOSECONDS);
                    } catch (RejectedExecutionException stopping) {
                        closed = true; // the loop is shutting down: nothing waits on it any more
                    }
                }
                if (!closed) {
                    return;
                }
                c.pooled = false;
                idle.get(c.key).remove(c);
                idleCount--;
            }
        }
        c.close();
    }

    /** The connection's channel closed: forget it if it waits here. */
    void closed(HttpConnection c) {
        synchronized (this) {
            if (!c.pooled) {
                return; // in use: its exchange sees the end of the input
            }
            c.pooled = false;
            ArrayDeque<HttpConnection> q = idle.get(c.key);
            if (q != null && q.remove(c)) {
                idleCount--;
            }
        }
        c.inbox.discard(); // a stray message the server sent before closing
    }

    private void sweep() {
        List<HttpConnection> stale = null;
        synchronized (this) {
            long now = System.nanoTime();
            for (ArrayDeque<HttpConnection> q : idle.values()) {
                for (Iterator<HttpConnection> it = q.iterator(); it.hasNext(); ) {
                    HttpConnection c = it.next();
                    if (now - c.idleSince >= idleTimeoutNanos || !c.isReusable()) {
                        it.remove();
                        idleCount--;
                        c.pooled = false;
                        stale = add(stale, c);
                    }
                }
            }
            idle.values().removeIf(ArrayDeque::isEmpty);
            if (idleCount == 0 && sweeper != null) {
                sweeper.cancel(false);
                sweeper = null;
            }
        }
        closeAll(stale);
    }

    /** Idle connections now. */
    synchronized int idleConnections() {
        return idleCount;
    }

    /** Closes the idle connections; connections given back later are closed at once. */
    void close() {
        List<HttpConnection> all = new ArrayList<>();
        synchronized (this) {
            closed = true;
            for (ArrayDeque<HttpConnection> q : idle.values()) {
                for (HttpConnection c : q) {
                    c.pooled = false;
                    all.add(c);
                }
            }
            idle.clear();
            idleCount = 0;
            if (sweeper != null) {
                sweeper.cancel(false);
                sweeper = null;
            }
        }
        closeAll(all);
    }

    private static List<HttpConnection> add(@Nullable List<HttpConnection> list, HttpConnection c) {
        List<HttpConnection> l = list == null ? new ArrayList<>() : list;
        l.add(c);
        return l;
    }

    private static void closeAll(@Nullable List<HttpConnection> connections) {
        if (connections != null) {
            connections.forEach(HttpConnection::close);
        }
    }
}
