package io.cosched;

/**
 * Thrown by a builder with {@code requireCarrierMode(true)} when coroutines cannot run on
 * cosched's carriers, because the JVM was started without
 * {@code --add-opens java.base/java.lang=ALL-UNNAMED}.
 */
public final class CarrierModeUnavailableException extends IllegalStateException {

    private static final long serialVersionUID = 1L;

    public CarrierModeUnavailableException(String message) {
        super(message);
    }
}
