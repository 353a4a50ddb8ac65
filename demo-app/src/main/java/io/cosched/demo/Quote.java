package io.cosched.demo;

/**
 * A price quote.
 *
 * @param attempts how many calls to the pricing service it took
 * @param style    {@code blocking} (a coroutine handler) or {@code reactive} (a Mono pipeline)
 * @param servedBy the thread that finished the handler: for a coroutine, {@code VirtualThread[#n]/runnable@cosched-io-k}
 */
public record Quote(String sku, long priceCents, int attempts, String style, String servedBy) {}
