package io.cosched.http.client;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * An HTTP/1.1 server written by hand, for answers a real server would not give on cue: each request
 * (head only; bodies are skipped by Content-Length) goes to a {@link Script}, which writes the raw
 * answer or closes the connection without one.
 */
public final class RawHttpServer implements AutoCloseable {

    public interface Script {
        /**
         * @param connection 0-based index of the connection, in accept order
         * @param request    0-based index of the request on that connection
         * @return the raw response, or {@code null} to close the connection without answering
         */
        String answer(int connection, int request, String head);
    }

    /** Ends an answer that the server closes the connection after, with nothing more said: see {@link #thenClose}. */
    private static final String CLOSE = "\u0000close";

    private final ServerSocket server;
    private final AtomicInteger connections = new AtomicInteger();
    private final CopyOnWriteArrayList<Socket> sockets = new CopyOnWriteArrayList<>();

    public RawHttpServer(Script script) throws IOException {
        server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread.ofPlatform().daemon().name("raw-http-accept").start(() -> {
            try {
                while (true) {
                    Socket s = server.accept();
                    sockets.add(s);
                    int index = connections.getAndIncrement();
                    Thread.ofPlatform().daemon().name("raw-http-" + index).start(() -> serve(s, index, script));
                }
            } catch (IOException closed) {
                // close()
            }
        });
    }

    private static void serve(Socket s, int index, Script script) {
        try (s) {
            InputStream in = s.getInputStream();
            for (int request = 0; ; request++) {
                String head = readHead(in);
                if (head == null) {
                    return;
                }
                int length = contentLength(head);
                in.readNBytes(length);
                String answer = script.answer(index, request, head);
                if (answer == null) {
                    return;
                }
                boolean close = answer.endsWith(CLOSE);
                String raw = close ? answer.substring(0, answer.length() - CLOSE.length()) : answer;
                s.getOutputStream().write(raw.getBytes(StandardCharsets.ISO_8859_1));
                s.getOutputStream().flush();
                if (close) {
                    return;
                }
            }
        } catch (IOException ignored) {
            // the client went away
        }
    }

    private static String readHead(InputStream in) throws IOException {
        ByteArrayOutputStream head = new ByteArrayOutputStream();
        int matched = 0;
        int c;
        while ((c = in.read()) >= 0) {
            head.write(c);
            matched = (c == '\r' && (matched == 0 || matched == 2)) || (c == '\n' && (matched == 1 || matched == 3))
                    ? matched + 1
                    : 0;
            if (matched == 4) {
                return head.toString(StandardCharsets.ISO_8859_1);
            }
        }
        return null;
    }

    private static int contentLength(String head) {
        for (String line : head.split("\r\n")) {
            if (line.regionMatches(true, 0, "Content-Length:", 0, 15)) {
                return Integer.parseInt(line.substring(15).trim());
            }
        }
        return 0;
    }

    public static String ok(String body) {
        return "HTTP/1.1 200 OK\r\nContent-Length: " + body.length() + "\r\nContent-Type: text/plain\r\n\r\n" + body;
    }

    /** {@code raw} written as it is, then the connection closed: for an answer cut short. */
    public static String thenClose(String raw) {
        return raw + CLOSE;
    }

    public int port() {
        return server.getLocalPort();
    }

    /** Connections accepted so far. */
    public int connections() {
        return connections.get();
    }

    @Override
    public void close() throws IOException {
        server.close();
        for (Socket s : sockets) {
            s.close();
        }
    }
}
