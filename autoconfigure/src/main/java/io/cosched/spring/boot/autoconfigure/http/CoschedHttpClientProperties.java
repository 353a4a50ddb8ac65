package io.cosched.spring.boot.autoconfigure.http;

import io.cosched.Arguments;
import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The {@code cosched.http.client.*} properties: {@code RestClient} and {@code RestTemplate} built from Spring Boot's
 * builders, on connections of cosched's event loops.
 */
@ConfigurationProperties("cosched.http.client")
public class CoschedHttpClientProperties {

    /**
     * Whether RestClient and RestTemplate built from Spring Boot's builders send their requests over
     * connections on cosched's event loops: a call from a coroutine uses a connection of its own loop.
     */
    private boolean enabled = true;

    /** How long an idle connection is kept for reuse before it is closed. */
    private Duration idleTimeout = Duration.ofSeconds(30);

    public boolean isEnabled() {
        return enabled;
    }

    public void setEnabled(boolean enabled) {
        this.enabled = enabled;
    }

    public Duration getIdleTimeout() {
        return idleTimeout;
    }

    public void setIdleTimeout(Duration idleTimeout) {
        this.idleTimeout = Arguments.positive("idle-timeout", idleTimeout);
    }
}
