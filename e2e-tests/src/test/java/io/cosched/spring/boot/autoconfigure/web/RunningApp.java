package io.cosched.spring.boot.autoconfigure.web;

import java.util.List;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * The {@link WebTestApp} of one test class: started with the given properties before its first
 * test, closed after its last, the handlers' probe reset before each test.
 *
 * <pre>{@literal @}RegisterExtension static final RunningApp app = new RunningApp("cosched.io.threads=1");</pre>
 */
final class RunningApp implements BeforeAllCallback, AfterAllCallback, BeforeEachCallback {

    private final List<String> properties;
    private ConfigurableApplicationContext context;
    private Http http;

    RunningApp(String... properties) {
        this.properties = List.of(properties);
    }

    @Override
    public void beforeAll(ExtensionContext extension) {
        context = WebTestApp.startWith(properties);
        http = new Http(WebTestApp.port(context));
    }

    @Override
    public void afterAll(ExtensionContext extension) {
        context.close();
    }

    @Override
    public void beforeEach(ExtensionContext extension) {
        WebTestApp.Probe.reset();
        StreamingHandlers.Probe.reset();
        FanOutHandlers.Probe.reset();
        WebSocketHandlers.Probe.reset();
    }

    ConfigurableApplicationContext context() {
        return context;
    }

    Http http() {
        return http;
    }

    <T> T bean(Class<T> type) {
        return context.getBean(type);
    }

    /** Waits until nothing of a test runs on: no coroutine request in flight, no coroutine, no timer pending. */
    void awaitIdle() throws Exception {
        io.cosched.spring.web.CoschedWebStats stats = bean(io.cosched.spring.web.CoschedWebStats.class);
        io.cosched.IOManager io = bean(io.cosched.IOManager.class);
        Await.until(
                () -> stats.inFlight() == 0
                        && io.stats().coroutines() == 0
                        && io.timers().pending() == 0,
                () -> stats + " " + io.stats() + ", timers " + io.timers().pending());
    }
}
