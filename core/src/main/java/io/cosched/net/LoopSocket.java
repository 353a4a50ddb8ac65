package io.cosched.net;

import io.cosched.IOManager;
import io.cosched.netty.NettyBlocking;
import io.cosched.netty.NettyInbox;
import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelOption;
import io.netty.channel.socket.DuplexChannel;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketAddress;
import java.net.SocketException;
import java.net.SocketImpl;
import java.net.SocketOption;
import java.net.StandardSocketOptions;
import java.net.UnknownHostException;
import java.nio.channels.ClosedByInterruptException;
import java.nio.channels.SocketChannel;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * A {@link Socket} whose connection is a Netty channel on one event loop of an IOManager: reads park
 * the caller until that loop delivers bytes, writes go through the channel. To a driver it is an
 * ordinary blocking socket (timeouts, half-close, TLS layered on top with an
 * {@code SSLSocketFactory}), but a coroutine homed on the same loop is resumed by the loop thread that
 * read its bytes, not by a JDK poller thread. Made by {@link LoopSocketFactory}.
 *
 * <p>Like a JDK socket: a read that times out ({@link #setSoTimeout}) leaves the socket usable; an
 * interrupted read or write closes it ("Closed by interrupt"); {@link #close()} from another thread
 * ends a blocked read with "Socket closed".
 *
 * <p>Its streams are {@link LoopSocketInput} and {@link LoopSocketOutput}. The file is long because it
 * overrides all of {@link Socket}'s public methods (some fifty, most a line or two: options, addresses,
 * state): one left to the JDK would reach a socket implementation this socket does not have.
 */
final class LoopSocket extends Socket {

    private final IOManager io;
    private final int fixedLoopIndex; // -1: the loop the connecting caller belongs to
    private final NettyInbox inbox = new NettyInbox();
    private final LoopSocketInput input = new LoopSocketInput(this, inbox);
    private final LoopSocketOutput output = new LoopSocketOutput(this, inbox);

    private volatile @Nullable Channel channel;
    private volatile int loopIndex = -1;
    private volatile boolean closed;
    private volatile boolean inputShutdown;
    private volatile boolean outputShutdown;
    private volatile int soTimeoutMillis;
    private boolean bound;
    private @Nullable SocketAddress bindAddress;

    // Options set before the connection exists, applied when it is made; their defaults are a JDK
    // socket's (SO_RCVBUF and SO_SNDBUF: the kernel's, so absent until set).
    private final Map<ChannelOption<?>, Object> options = new HashMap<>(Map.of(
            ChannelOption.TCP_NODELAY,
            false,
            ChannelOption.SO_KEEPALIVE,
            false,
            ChannelOption.SO_REUSEADDR,
            false,
            ChannelOption.SO_LINGER,
            -1,
            ChannelOption.IP_TOS,
            0));
    private boolean oobInline;

    /** The standard socket options a loop socket supports, and the Netty options they are. */
    private static final Map<SocketOption<?>, ChannelOption<?>> STANDARD = Map.of(
            StandardSocketOptions.TCP_NODELAY, ChannelOption.TCP_NODELAY,
            StandardSocketOptions.SO_KEEPALIVE, ChannelOption.SO_KEEPALIVE,
            StandardSocketOptions.SO_REUSEADDR, ChannelOption.SO_REUSEADDR,
            StandardSocketOptions.SO_LINGER, ChannelOption.SO_LINGER,
            StandardSocketOptions.SO_RCVBUF, ChannelOption.SO_RCVBUF,
            StandardSocketOptions.SO_SNDBUF, ChannelOption.SO_SNDBUF,
            StandardSocketOptions.IP_TOS, ChannelOption.IP_TOS);

    LoopSocket(IOManager io, int loopIndex) throws SocketException {
        super((SocketImpl) null); // every method that would use the JDK's implementation is overridden
        this.io = io;
        this.fixedLoopIndex = loopIndex;
    }

    // ---- connecting --------------------------------------------------------------------------------

    @Override
    public void connect(SocketAddress endpoint) throws IOException {
        connect(endpoint, 0);
    }

    @Override
    public void connect(SocketAddress endpoint, int timeout) throws IOException {
        if (timeout < 0) {
            throw new IllegalArgumentException("connect: timeout can't be negative");
        }
        if (!(Objects.requireNonNull(endpoint, "connect: The address can't be null")
                instanceof InetSocketAddress addr)) {
            throw new IllegalArgumentException("Unsupported address type");
        }
        synchronized (this) {
            checkOpen();
            if (channel != null) {
                throw new SocketException("already connected");
            }
        }
        if (addr.isUnresolved()) {
            addr = new InetSocketAddress(InetAddress.getByName(addr.getHostString()), addr.getPort());
            if (addr.isUnresolved()) {
                throw new UnknownHostException(addr.getHostString());
            }
        }
        int index;
        try {
            index = fixedLoopIndex >= 0 ? fixedLoopIndex : io.loopIndexForCaller();
        } catch (IllegalStateException e) {
            throw new SocketException(e.getMessage());
        }
        Bootstrap b = io.bootstrap(index)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, timeout) // 0: none, as for a JDK socket
                .option(ChannelOption.ALLOW_HALF_CLOSURE, true) // shutdownInput/Output as on a JDK socket
                .handler(inbox);
        synchronized (this) {
            options.forEach((option, value) -> apply(b, option, value));
        }
        Channel ch;
        try {
            ch = NettyBlocking.connect(b, addr, bindAddress);
        } catch (ClosedByInterruptException e) {
            close();
            throw closedByInterrupt(e);
        }
        synchronized (this) {
            if (closed) {
                ch.close(); // closed while connecting
                throw new SocketException("Socket closed");
            }
            channel = ch;
            loopIndex = index;
            bound = true;
        }
    }

    @Override
    public synchronized void bind(SocketAddress bindpoint) throws IOException {
        checkOpen();
        if (bound) {
            throw new SocketException("Already bound");
        }
        if (bindpoint != null && !(bindpoint instanceof InetSocketAddress)) {
            throw new IllegalArgumentException("Unsupported address type");
        }
        bindAddress = bindpoint; // bound when the connection is made
        bound = true;
    }

    // ---- streams -----------------------------------------------------------------------------------

    @Override
    public InputStream getInputStream() throws IOException {
        checkOpen();
        checkConnected();
        if (inputShutdown) {
            throw new SocketException("Socket input is shutdown");
        }
        return input;
    }

    @Override
    public OutputStream getOutputStream() throws IOException {
        checkOpen();
        checkConnected();
        if (outputShutdown) {
            throw new SocketException("Socket output is shutdown");
        }
        return output;
    }

    // ---- closing -----------------------------------------------------------------------------------

    @Override
    public void close() {
        Channel ch;
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            ch = channel;
        }
        if (ch != null) {
            ch.close();
        }
        inbox.discard(); // wakes a reader blocked on another thread: it reports "Socket closed"
        input.releaseLeftover();
    }

    @Override
    public void shutdownInput() throws IOException {
        checkOpen();
        Channel ch = checkConnected();
        if (inputShutdown) {
            throw new SocketException("Socket input is already shutdown");
        }
        inputShutdown = true;
        ((DuplexChannel) ch).shutdownInput();
        inbox.discard(); // what arrives later is dropped, reads return -1
    }

    @Override
    public void shutdownOutput() throws IOException {
        checkOpen();
        Channel ch = checkConnected();
        if (outputShutdown) {
            throw new SocketException("Socket output is already shutdown");
        }
        outputShutdown = true;
        ((DuplexChannel) ch).shutdownOutput();
    }

    static SocketException closedByInterrupt(ClosedByInterruptException e) {
        SocketException s = new SocketException("Closed by interrupt");
        s.initCause(e);
        return s;
    }

    private void checkOpen() throws SocketException {
        if (closed) {
            throw new SocketException("Socket is closed");
        }
    }

    Channel checkConnected() throws SocketException {
        Channel ch = channel;
        if (ch == null) {
            throw new SocketException("Socket is not connected");
        }
        return ch;
    }

    // ---- state and addresses -----------------------------------------------------------------------

    @Override
    public boolean isConnected() {
        return channel != null;
    }

    @Override
    public synchronized boolean isBound() {
        return bound;
    }

    @Override
    public boolean isClosed() {
        return closed;
    }

    @Override
    public boolean isInputShutdown() {
        return inputShutdown;
    }

    @Override
    public boolean isOutputShutdown() {
        return outputShutdown;
    }

    @Override
    public @Nullable SocketChannel getChannel() {
        return null;
    }

    @Override
    public @Nullable InetAddress getInetAddress() {
        SocketAddress a = remote();
        return a instanceof InetSocketAddress i ? i.getAddress() : null;
    }

    @Override
    public int getPort() {
        SocketAddress a = remote();
        return a instanceof InetSocketAddress i ? i.getPort() : 0;
    }

    @Override
    public @Nullable SocketAddress getRemoteSocketAddress() {
        return remote();
    }

    @Override
    public InetAddress getLocalAddress() {
        SocketAddress a = local();
        return a instanceof InetSocketAddress i ? i.getAddress() : new InetSocketAddress(0).getAddress();
    }

    @Override
    public int getLocalPort() {
        SocketAddress a = local();
        return a instanceof InetSocketAddress i ? i.getPort() : -1;
    }

    @Override
    public @Nullable SocketAddress getLocalSocketAddress() {
        return local();
    }

    private @Nullable SocketAddress remote() {
        Channel ch = channel;
        return ch == null ? null : ch.remoteAddress();
    }

    private @Nullable SocketAddress local() {
        Channel ch = channel;
        return ch == null ? bindAddress : ch.localAddress();
    }

    /** The connection, {@code null} before it is made. */
    @Nullable
    Channel channel() {
        return channel;
    }

    /** {@link #getSoTimeout()} for the reader, which checks for a close itself. */
    int soTimeoutMillis() {
        return soTimeoutMillis;
    }

    /** The index of the event loop the connection lives on, -1 before it is made. */
    int loopIndex() {
        return loopIndex;
    }

    NettyInbox inbox() {
        return inbox;
    }

    // ---- options -----------------------------------------------------------------------------------

    @Override
    public void setSoTimeout(int timeout) throws SocketException {
        checkOpen();
        if (timeout < 0) {
            throw new IllegalArgumentException("timeout < 0");
        }
        soTimeoutMillis = timeout;
    }

    @Override
    public int getSoTimeout() throws SocketException {
        checkOpen();
        return soTimeoutMillis;
    }

    @Override
    public void setTcpNoDelay(boolean on) throws SocketException {
        set(ChannelOption.TCP_NODELAY, on);
    }

    @Override
    public boolean getTcpNoDelay() throws SocketException {
        return get(ChannelOption.TCP_NODELAY);
    }

    @Override
    public void setKeepAlive(boolean on) throws SocketException {
        set(ChannelOption.SO_KEEPALIVE, on);
    }

    @Override
    public boolean getKeepAlive() throws SocketException {
        return get(ChannelOption.SO_KEEPALIVE);
    }

    @Override
    public void setReuseAddress(boolean on) throws SocketException {
        set(ChannelOption.SO_REUSEADDR, on);
    }

    @Override
    public boolean getReuseAddress() throws SocketException {
        return get(ChannelOption.SO_REUSEADDR);
    }

    @Override
    public void setSoLinger(boolean on, int linger) throws SocketException {
        if (on && linger < 0) {
            throw new IllegalArgumentException("invalid value for SO_LINGER");
        }
        set(ChannelOption.SO_LINGER, on ? Math.min(linger, 65535) : -1);
    }

    @Override
    public int getSoLinger() throws SocketException {
        return get(ChannelOption.SO_LINGER);
    }

    @Override
    public void setReceiveBufferSize(int size) throws SocketException {
        if (size <= 0) {
            throw new IllegalArgumentException("invalid receive size");
        }
        set(ChannelOption.SO_RCVBUF, size);
    }

    @Override
    public int getReceiveBufferSize() throws SocketException {
        return get(ChannelOption.SO_RCVBUF);
    }

    @Override
    public void setSendBufferSize(int size) throws SocketException {
        if (size <= 0) {
            throw new IllegalArgumentException("negative send size");
        }
        set(ChannelOption.SO_SNDBUF, size);
    }

    @Override
    public int getSendBufferSize() throws SocketException {
        return get(ChannelOption.SO_SNDBUF);
    }

    @Override
    public void setTrafficClass(int tc) throws SocketException {
        if (tc < 0 || tc > 255) {
            throw new IllegalArgumentException("tc is not in range 0 -- 255");
        }
        set(ChannelOption.IP_TOS, tc);
    }

    @Override
    public int getTrafficClass() throws SocketException {
        return get(ChannelOption.IP_TOS);
    }

    @Override
    public void setOOBInline(boolean on) throws SocketException {
        checkOpen();
        oobInline = on; // urgent data is never sent, so there is none to inline
    }

    @Override
    public boolean getOOBInline() throws SocketException {
        checkOpen();
        return oobInline;
    }

    @Override
    public void sendUrgentData(int data) throws IOException {
        throw new SocketException("Urgent data not supported");
    }

    @Override
    public void setPerformancePreferences(int connectionTime, int latency, int bandwidth) {
        // a hint the JDK's own sockets ignore too
    }

    /** Sets {@code option} on the connection, or keeps it for when the connection is made. */
    private synchronized <T> void set(ChannelOption<T> option, T value) throws SocketException {
        checkOpen();
        Channel ch = channel;
        if (ch != null && !ch.config().setOption(option, value)) {
            throw new SocketException(option.name() + " not supported");
        }
        options.put(option, value);
    }

    /** The connection's value of {@code option}, or the one kept for it (the kernel's buffer sizes: 0 until connected). */
    @SuppressWarnings("unchecked")
    private synchronized <T> T get(ChannelOption<T> option) throws SocketException {
        checkOpen();
        Channel ch = channel;
        T value = ch == null ? null : ch.config().getOption(option);
        return value != null ? value : (T) options.getOrDefault(option, 0);
    }

    @SuppressWarnings("unchecked")
    private static <T> void apply(Bootstrap b, ChannelOption<T> option, Object value) {
        b.option(option, (T) value);
    }

    /** Typed setters check the values; this routes a standard option to them. */
    @Override
    public <T> Socket setOption(SocketOption<T> name, T value) throws IOException {
        if (standard(name) == ChannelOption.SO_LINGER) {
            int v = (Integer) value;
            setSoLinger(v >= 0, v);
        } else if (name == StandardSocketOptions.SO_RCVBUF) {
            setReceiveBufferSize((Integer) value);
        } else if (name == StandardSocketOptions.SO_SNDBUF) {
            setSendBufferSize((Integer) value);
        } else if (name == StandardSocketOptions.IP_TOS) {
            setTrafficClass((Integer) value);
        } else {
            set(standard(name), value); // the three booleans
        }
        return this;
    }

    @Override
    public <T> T getOption(SocketOption<T> name) throws IOException {
        @SuppressWarnings("unchecked")
        ChannelOption<T> option = (ChannelOption<T>) standard(name);
        return get(option);
    }

    @SuppressWarnings("unchecked")
    private static <T> ChannelOption<T> standard(SocketOption<T> name) {
        ChannelOption<?> option = STANDARD.get(Objects.requireNonNull(name, "name"));
        if (option == null) {
            throw new UnsupportedOperationException("'" + name + "' not supported");
        }
        return (ChannelOption<T>) option;
    }

    @Override
    public Set<SocketOption<?>> supportedOptions() {
        return STANDARD.keySet();
    }

    @Override
    public String toString() {
        Channel ch = channel;
        if (ch == null) {
            return "LoopSocket[unconnected, " + io.name() + "]";
        }
        return "LoopSocket[addr=" + getInetAddress() + ",port=" + getPort() + ",localport=" + getLocalPort() + ",loop="
                + io.name() + "-" + loopIndex + "]";
    }
}
