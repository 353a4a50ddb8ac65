package io.cosched.spring.boot.autoconfigure.actuate;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * cosched's settings of the {@code cosched} actuator endpoint, beside Spring Boot's own
 * {@code management.endpoint.cosched.access}.
 */
@ConfigurationProperties("management.endpoint.cosched")
public class CoschedEndpointProperties {

    private final Dump dump = new Dump();

    public Dump getDump() {
        return dump;
    }

    /** The coroutine dump at {@code /actuator/cosched/<scheduler>/dump}. */
    public static class Dump {

        /**
         * Whether /actuator/cosched/{scheduler}/dump lists live coroutines with their stacks. Off by
         * default: stacks can show data (arguments in frames of your code, class names), and the
         * schedulers then track every coroutine, which costs a set insert and removal per coroutine.
         */
        private boolean enabled;

        public boolean isEnabled() {
            return enabled;
        }

        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }
    }
}
