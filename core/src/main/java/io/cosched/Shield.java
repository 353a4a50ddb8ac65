package io.cosched;

/**
 * A section of a coroutine that an interrupt must not cut short, opened with
 * {@link Coroutines#shield(Runnable)}: typically while the coroutine holds a pooled connection whose
 * protocol an interrupted read would break (the JDK, and cosched's loop sockets, close a socket whose
 * reader is interrupted). While a shield is open, {@link Coroutine#interrupt()} does not interrupt the
 * coroutine's thread: it runs the shield's action instead (which should make the shielded work end
 * soon, for instance by asking the database to cancel the statement) and delivers the interrupt when
 * the coroutine's last shield closes.
 *
 * <p>Shields guard against {@link Coroutine#interrupt()} and {@link Coroutine#cancel()}, the ways
 * cosched itself interrupts a coroutine (a request whose client went away, or whose timeout passed).
 * A plain {@link Thread#interrupt()} of the coroutine's thread is not held back.
 */
public interface Shield extends AutoCloseable {

    /** Whether an interrupt arrived while this shield was open and waits for the shields to close. */
    boolean interruptPending();

    /**
     * Closes the shield; closing it again does nothing. When it was the coroutine's last open shield
     * and an interrupt is pending, the coroutine's thread is interrupted now.
     */
    @Override
    void close();
}
