package io.cosched.spring.boot.autoconfigure.security;

import org.springframework.boot.context.properties.ConfigurationProperties;

/** The {@code cosched.security.*} properties: Spring Security in a reactive application. */
@ConfigurationProperties("cosched.security")
public class CoschedSecurityProperties {

    /**
     * Where Spring Security checks a presented password (HTTP basic, form login): compute (cosched's
     * compute pool, one thread per core), loop (on the thread that asked, usually the request's event
     * loop: no hand-off, for cheap encoders only) or bounded-elastic (Spring Security's own choice, left
     * alone).
     */
    private PasswordCheck passwordCheck = PasswordCheck.COMPUTE;

    public PasswordCheck getPasswordCheck() {
        return passwordCheck;
    }

    public void setPasswordCheck(PasswordCheck passwordCheck) {
        this.passwordCheck = passwordCheck;
    }

    /** Where Spring Security's reactive authentication checks a password against its hash. */
    public enum PasswordCheck {
        /**
         * On cosched's compute pool (one platform thread per core): a hash such as bcrypt costs tens of
         * milliseconds of CPU, which an event loop must not spend; the request then goes back to its
         * connection's loop for its coroutine handler.
         */
        COMPUTE,
        /**
         * On the thread that asked, usually the request's event loop: no hand-off at all. Only
         * for encoders that cost microseconds; a bcrypt check holds the loop and every connection on it.
         */
        LOOP,
        /** Where Spring Security puts it by default, Reactor's {@code boundedElastic} scheduler; cosched changes nothing. */
        BOUNDED_ELASTIC
    }
}
