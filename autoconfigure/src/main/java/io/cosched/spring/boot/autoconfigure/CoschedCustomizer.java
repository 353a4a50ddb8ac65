package io.cosched.spring.boot.autoconfigure;

import io.cosched.IOManager;
import io.cosched.PoolScheduler;

/**
 * Adjusts the builders of the schedulers cosched auto-configures, after the {@code cosched.*}
 * properties were applied and before {@code build()}. Declare any number as beans; they run in
 * {@link org.springframework.core.annotation.Order @Order}.
 */
public interface CoschedCustomizer {

    /** Adjusts the PoolScheduler's builder. */
    default void customize(PoolScheduler.Builder builder) {}

    /** Adjusts the IOManager's builder. */
    default void customize(IOManager.Builder builder) {}
}
