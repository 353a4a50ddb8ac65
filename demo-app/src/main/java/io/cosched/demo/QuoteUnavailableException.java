package io.cosched.demo;

/** Every call to the pricing service for one quote failed; the last one {@link #timedOut() timed out} or not. */
public class QuoteUnavailableException extends RuntimeException {

    private final boolean timedOut;

    public QuoteUnavailableException(String sku, int attempts, boolean timedOut, Throwable last) {
        super(
                "no price for '" + sku + "' after " + attempts + " attempt" + (attempts == 1 ? "" : "s") + ": "
                        + (timedOut ? "the pricing service did not answer in time" : "the pricing service failed")
                        + " (" + last.getMessage() + ")",
                last);
        this.timedOut = timedOut;
    }

    public boolean timedOut() {
        return timedOut;
    }
}
