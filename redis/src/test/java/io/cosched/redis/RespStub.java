package io.cosched.redis;

import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A Redis stand-in for the tests that must run without a server: RESP2 over loopback, on platform threads,
 * with the commands a client needs to connect (HELLO is refused, so Lettuce falls back to RESP2) and
 * PING, GET, SET, DEL, INCR, ECHO. Everything it answers is what a real Redis answers for them.
 */
public final class RespStub implements AutoCloseable {

    private final ServerSocket server;
    private final Map<String, byte[]> data = new ConcurrentHashMap<>();
    private final List<Socket> clients = new CopyOnWriteArrayList<>();
    private final AtomicInteger connections = new AtomicInteger();

    public RespStub() throws IOException {
        server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread.ofPlatform().daemon().name("resp-stub-accept").start(this::accept);
    }

    public int port() {
        return server.getLocalPort();
    }

    /** Connections accepted so far. */
    public int connections() {
        return connections.get();
    }

    /** Closes every client connection, as a server that went away would. */
    public void dropClients() throws IOException {
        for (Socket s : clients) {
            s.close();
        }
        clients.clear();
    }

    private void accept() {
        while (!server.isClosed()) {
            try {
                Socket s = server.accept();
                connections.incrementAndGet();
                clients.add(s);
                Thread.ofPlatform().daemon().name("resp-stub-client").start(() -> serve(s));
            } catch (IOException e) {
                return;
            }
        }
    }

    private void serve(Socket s) {
        try (s;
                InputStream in = new BufferedInputStream(s.getInputStream());
                OutputStream out = s.getOutputStream()) {
            while (true) {
                List<byte[]> command = readCommand(in);
                if (command == null) {
                    return;
                }
                out.write(answer(command));
                out.flush();
            }
        } catch (IOException e) {
            // the client went away, or dropClients closed it
        } finally {
            clients.remove(s);
        }
    }

    private byte[] answer(List<byte[]> command) {
        String name = new String(command.get(0), StandardCharsets.UTF_8).toUpperCase(Locale.ROOT);
        return switch (name) {
            case "PING" -> simple("PONG");
            case "CLIENT", "SELECT", "AUTH" -> simple("OK");
            case "ECHO" -> bulk(command.get(1));
            case "SET" -> {
                data.put(key(command), command.get(2));
                yield simple("OK");
            }
            case "GET" -> bulk(data.get(key(command)));
            case "DEL" -> integer(data.remove(key(command)) == null ? 0 : 1);
            case "INCR" -> {
                byte[] next = data.merge(
                        key(command),
                        "1".getBytes(StandardCharsets.US_ASCII),
                        (old, one) -> Long.toString(Long.parseLong(new String(old, StandardCharsets.US_ASCII)) + 1)
                                .getBytes(StandardCharsets.US_ASCII));
                yield integer(Long.parseLong(new String(next, StandardCharsets.US_ASCII)));
            }
            default -> ("-ERR unknown command '" + name + "'\r\n").getBytes(StandardCharsets.UTF_8);
        };
    }

    private static String key(List<byte[]> command) {
        return new String(command.get(1), StandardCharsets.UTF_8);
    }

    private static byte[] simple(String s) {
        return ("+" + s + "\r\n").getBytes(StandardCharsets.UTF_8);
    }

    private static byte[] integer(long n) {
        return (":" + n + "\r\n").getBytes(StandardCharsets.UTF_8);
    }

    private static byte[] bulk(byte[] value) {
        if (value == null) {
            return "$-1\r\n".getBytes(StandardCharsets.US_ASCII);
        }
        byte[] head = ("$" + value.length + "\r\n").getBytes(StandardCharsets.US_ASCII);
        byte[] all = new byte[head.length + value.length + 2];
        System.arraycopy(head, 0, all, 0, head.length);
        System.arraycopy(value, 0, all, head.length, value.length);
        all[all.length - 2] = '\r';
        all[all.length - 1] = '\n';
        return all;
    }

    /** A RESP array of bulk strings, or {@code null} at the end of the stream. */
    private static List<byte[]> readCommand(InputStream in) throws IOException {
        String head = line(in);
        if (head == null) {
            return null;
        }
        if (head.charAt(0) != '*') {
            throw new IOException("not a RESP array: " + head);
        }
        int n = Integer.parseInt(head.substring(1));
        List<byte[]> parts = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            String len = line(in);
            if (len == null || len.charAt(0) != '$') {
                throw new IOException("not a bulk string: " + len);
            }
            byte[] part = in.readNBytes(Integer.parseInt(len.substring(1)));
            in.readNBytes(2);
            parts.add(part);
        }
        return parts;
    }

    private static String line(InputStream in) throws IOException {
        StringBuilder sb = new StringBuilder();
        int c;
        while ((c = in.read()) != -1) {
            if (c == '\r') {
                in.read(); // '\n'
                return sb.toString();
            }
            sb.append((char) c);
        }
        return null;
    }

    @Override
    public void close() throws IOException {
        server.close();
        dropClients();
    }
}
