package io.cosched.net;

import io.cosched.IOManager;
import io.cosched.internal.IORuntime;
import io.cosched.netty.NettyInbox;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.util.Objects;
import javax.net.SocketFactory;
import org.jspecify.annotations.Nullable;

/**
 * Sockets whose connections are Netty channels on an IOManager's event loops (see {@link NettyInbox}
 * for why): hand this class's name to a JDBC driver's socket-factory hook and the driver's blocking
 * reads park the calling coroutine until its own loop delivers the bytes. For the PostgreSQL driver:
 *
 * <pre>
 * jdbc:postgresql://db/app?socketFactory=io.cosched.net.LoopSocketFactory&amp;socketFactoryArg=cosched-io/0
 * </pre>
 *
 * <p>The argument (the driver's {@code socketFactoryArg}, or the {@link #LoopSocketFactory(String)}
 * constructor's) names the running IOManager and, optionally, the loop: {@code cosched-io/0} opens
 * every connection on loop 0 (one connection pool per loop, so that a coroutine borrows a connection
 * of its own loop); {@code cosched-io} opens each on the loop of the coroutine that connects (see
 * {@link IOManager#loopIndexForCaller()}); without an argument the first IOManager started is used. Of several running
 * IOManagers of one name (one per application context, as in a test suite), the name finds the first started;
 * {@link #argument(IOManager, int)} makes the argument that finds one of them only.
 *
 * <p>TLS works as on a JDK socket: the driver layers its {@code SSLSocket} over this one.
 */
public class LoopSocketFactory extends SocketFactory {

    private final @Nullable IOManager io; // null: look up by name (or the default) when a socket is made
    private final @Nullable String ioName; // null: the first IOManager started
    private final int loopIndex; // -1: the caller's loop

    /** Sockets on the first IOManager started, each on the loop of the coroutine that connects it. */
    public LoopSocketFactory() {
        this((String) null);
    }

    /**
     * @param arg {@code <IOManager name>} or {@code <IOManager name>/<loop index>}; {@code null} or
     *            blank for the first IOManager started
     * @throws IllegalArgumentException if {@code arg} has another form
     */
    public LoopSocketFactory(@Nullable String arg) {
        this.io = null;
        if (arg == null || arg.isBlank()) {
            this.ioName = null;
            this.loopIndex = -1;
            return;
        }
        int slash = arg.lastIndexOf('/');
        String name = slash < 0 ? arg : arg.substring(0, slash);
        int index = -1;
        if (slash >= 0) {
            try {
                index = Integer.parseInt(arg.substring(slash + 1).trim());
            } catch (NumberFormatException e) {
                index = -1;
            }
            if (index < 0) {
                throw new IllegalArgumentException("socketFactoryArg: '" + arg + "' (expected: <IOManager name> or "
                        + "<IOManager name>/<loop index>, e.g. cosched-io/0)");
            }
        }
        if (name.isBlank()) {
            throw new IllegalArgumentException("socketFactoryArg: '" + arg + "' (expected: <IOManager name> or "
                    + "<IOManager name>/<loop index>, e.g. cosched-io/0)");
        }
        this.ioName = name.trim();
        this.loopIndex = index;
    }

    /** Sockets on {@code io}, each on the loop of the coroutine that connects it. */
    public LoopSocketFactory(IOManager io) {
        this(io, -1);
    }

    /**
     * Sockets on loop {@code loop} of {@code io} ({@code -1}: the loop of the coroutine that connects).
     *
     * @throws IllegalArgumentException if {@code loop} is out of range
     */
    public LoopSocketFactory(IOManager io, int loopIndex) {
        this.io = Objects.requireNonNull(io, "io: null (expected: the IOManager whose loops carry the sockets)");
        if (loopIndex < -1 || loopIndex >= io.threads()) {
            throw new IllegalArgumentException("loopIndex: " + loopIndex
                    + " (expected: -1 for the caller's loop, or 0.." + (io.threads() - 1) + ")");
        }
        this.ioName = io.name();
        this.loopIndex = loopIndex;
    }

    /**
     * The argument ({@code socketFactoryArg}) for sockets on loop {@code loop} of {@code io} itself ({@code -1}: the
     * loop of the coroutine that connects), even when other running IOManagers have its name.
     */
    public static String argument(IOManager io, int loopIndex) {
        String key = io instanceof IORuntime runtime ? runtime.key() : io.name();
        return loopIndex < 0 ? key : key + "/" + loopIndex;
    }

    /** An unconnected socket; {@code connect} opens it on its loop. */
    @Override
    public Socket createSocket() throws SocketException {
        return new LoopSocket(ioManager(), loopIndex);
    }

    @Override
    public Socket createSocket(String host, int port) throws IOException {
        return connected(new InetSocketAddress(host, port), null);
    }

    @Override
    public Socket createSocket(String host, int port, InetAddress localHost, int localPort) throws IOException {
        return connected(new InetSocketAddress(host, port), new InetSocketAddress(localHost, localPort));
    }

    @Override
    public Socket createSocket(InetAddress host, int port) throws IOException {
        return connected(new InetSocketAddress(host, port), null);
    }

    @Override
    public Socket createSocket(InetAddress address, int port, InetAddress localAddress, int localPort)
            throws IOException {
        return connected(new InetSocketAddress(address, port), new InetSocketAddress(localAddress, localPort));
    }

    private Socket connected(InetSocketAddress remote, @Nullable InetSocketAddress local) throws IOException {
        Socket s = createSocket();
        try {
            if (local != null) {
                s.bind(local);
            }
            s.connect(remote);
            return s;
        } catch (IOException | RuntimeException e) {
            s.close();
            throw e;
        }
    }

    private IOManager ioManager() throws SocketException {
        if (io != null) {
            return io;
        }
        if (ioName == null) {
            return IOManager.defaultInstance();
        }
        return IOManager.running(ioName)
                .orElseThrow(() -> new SocketException("no running IOManager named '" + ioName + "' for " + this
                        + " (start it before connections are opened)"));
    }

    @Override
    public String toString() {
        return "LoopSocketFactory[" + (ioName == null ? "default IOManager" : ioName)
                + (loopIndex < 0 ? "" : "/" + loopIndex) + "]";
    }
}
