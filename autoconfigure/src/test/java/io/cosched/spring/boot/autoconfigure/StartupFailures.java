package io.cosched.spring.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Map;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.test.system.CapturedOutput;

/** A start-up that a bad property stops, as an application sees it: Spring Boot's failure report. */
public final class StartupFailures {

    private StartupFailures() {}

    /**
     * Runs {@code configuration} (no web server) with {@code property} ("name=value") and checks that it fails to
     * start with a report containing each of {@code expected}.
     */
    public static void assertStartupFails(
            Class<?> configuration, CapturedOutput output, String property, String... expected) {
        SpringApplication app = new SpringApplication(configuration);
        app.setWebApplicationType(WebApplicationType.NONE);
        app.setDefaultProperties(Map.of("spring.main.banner-mode", "off"));
        assertThatThrownBy(() -> app.run("--" + property)).isNotNull();
        assertThat(output).contains("APPLICATION FAILED TO START").contains(List.of(expected));
    }
}
