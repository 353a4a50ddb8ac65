package io.cosched;

/** Thrown when a builder asks for a transport this machine cannot provide, e.g. {@link Transport#EPOLL} off Linux. */
public final class TransportUnavailableException extends IllegalStateException {

    private static final long serialVersionUID = 1L;

    private final Transport transport;

    public TransportUnavailableException(Transport transport, String message, Throwable cause) {
        super(message, cause);
        this.transport = transport;
    }

    /** The transport that was asked for. */
    public Transport transport() {
        return transport;
    }
}
