package io.cosched.spring.boot.autoconfigure.redis;

import org.springframework.boot.context.properties.ConfigurationProperties;

/** The {@code cosched.redis.*} properties: Redis through Spring Data Redis and Lettuce, on cosched's event loops. */
@ConfigurationProperties("cosched.redis")
public class CoschedRedisProperties {

    /**
     * Whether Spring Boot's Lettuce connection factory gives coroutines connections of their own event loop:
     * one Lettuce client per loop behind the one factory, so the loop that reads a reply resumes the
     * coroutine that waits for it. Standalone, Sentinel and Unix-socket setups; Redis Cluster and static
     * master/replica keep Lettuce's own threads.
     */
    private boolean enabled = true;

    public boolean isEnabled() {
        return enabled;
    }

    public void setEnabled(boolean enabled) {
        this.enabled = enabled;
    }
}
