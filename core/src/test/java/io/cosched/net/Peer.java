package io.cosched.net;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The other end of the tests' connections: a plain JDK server on platform threads, one thread per
 * connection, so that nothing it does can resume a coroutine from a loop thread.
 */
final class Peer implements AutoCloseable {

    interface Handler {
        void handle(Socket socket) throws Exception;
    }

    private final ServerSocket server;
    private final CopyOnWriteArrayList<Socket> accepted = new CopyOnWriteArrayList<>();

    Peer(Handler handler) throws IOException {
        this(handler, null);
    }

    /** With {@code factory}, a TLS server (its sockets are {@code SSLServerSocket}s). */
    Peer(Handler handler, javax.net.ServerSocketFactory factory) throws IOException {
        server = factory == null
                ? new ServerSocket(0, 50, InetAddress.getLoopbackAddress())
                : factory.createServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread.ofPlatform().daemon().name("peer-accept").start(() -> {
            try {
                while (true) {
                    Socket s = server.accept();
                    accepted.add(s);
                    Thread.ofPlatform().daemon().name("peer-conn").start(() -> {
                        try (s) {
                            handler.handle(s);
                        } catch (Exception ignored) {
                            // the test sees what went wrong from its side
                        }
                    });
                }
            } catch (IOException closed) {
                // close()
            }
        });
    }

    int port() {
        return server.getLocalPort();
    }

    /** Connections accepted so far. */
    int connections() {
        return accepted.size();
    }

    @Override
    public void close() throws IOException {
        server.close();
        for (Socket s : accepted) {
            s.close();
        }
    }

    /** Reads one line terminated by {@code \n} (without it), or {@code null} at the end of the stream. */
    static String readLine(java.io.InputStream in) throws IOException {
        StringBuilder line = new StringBuilder();
        int c;
        while ((c = in.read()) >= 0) {
            if (c == '\n') {
                return line.toString();
            }
            line.append((char) c);
        }
        return line.isEmpty() ? null : line.toString();
    }
}
