package io.cosched.spring.boot.autoconfigure.http;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The {@code cosched.web-client.*} properties: Reactor Netty clients on cosched's loops, Spring Boot's
 * {@code WebClient.Builder} and {@code ClientHttpConnector}, and Reactor Netty's global HTTP resources.
 */
@ConfigurationProperties("cosched.web-client")
public class CoschedWebClientProperties {

    /**
     * Whether Reactor Netty clients made from the application's ReactorResourceFactory (Spring Boot's
     * WebClient.Builder) keep one connection pool per event loop: a coroutine that blocks on a call takes a
     * connection of its own loop, which resumes it; a reactive caller on a loop keeps its connections there.
     */
    private boolean enabled = true;

    /**
     * Whether a WebClient on Spring Boot's connector sends the calls of coroutines over cosched's own HTTP client
     * on the coroutine's loop (LoopHttpClient, no Reactor Netty client in between); reactive callers keep Reactor
     * Netty either way. Needs enabled.
     */
    private boolean loopClient = true;

    /**
     * Whether Reactor Netty's global HTTP resources, which clients not made from Spring Boot's builder use
     * (WebClient.create(), Spring Security's JWK set client), run on the IOManager's event loops rather than on
     * Reactor Netty's own reactor-http threads; given back when the context closes.
     */
    private boolean globalLoops = true;

    public boolean isGlobalLoops() {
        return globalLoops;
    }

    public void setGlobalLoops(boolean globalLoops) {
        this.globalLoops = globalLoops;
    }

    public boolean isEnabled() {
        return enabled;
    }

    public void setEnabled(boolean enabled) {
        this.enabled = enabled;
    }

    public boolean isLoopClient() {
        return loopClient;
    }

    public void setLoopClient(boolean loopClient) {
        this.loopClient = loopClient;
    }
}
