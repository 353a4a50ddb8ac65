package io.cosched;

/** Thrown by {@link Channel#send} on a closed channel, and by {@link Channel#receive} on a closed, drained one. */
public final class ChannelClosedException extends IllegalStateException {

    private static final long serialVersionUID = 1L;

    public ChannelClosedException(String message) {
        super(message);
    }
}
