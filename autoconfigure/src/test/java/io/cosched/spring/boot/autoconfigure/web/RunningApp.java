package io.cosched.spring.boot.autoconfigure.web;

import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.springframework.context.ConfigurableApplicationContext;

import java.util.List;

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
}
