package io.cosched.spring.boot.autoconfigure.web;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cosched.spring.boot.autoconfigure.StartupFailures;
import io.cosched.spring.web.server.AdmissionControl;
import io.cosched.spring.web.stream.StreamLimits;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.annotation.Configuration;

/** The {@code cosched.web.*} properties: their defaults, and a bad value stopping start-up with its name and rule. */
@Timeout(60)
@ExtendWith(OutputCaptureExtension.class)
class CoschedWebPropertiesTest {

    @Test
    void defaultsAreTheWebModulesDefaults() {
        CoschedWebProperties p = new CoschedWebProperties();
        assertThat(p.getMode()).isEqualTo(CoschedWebProperties.Mode.ANNOTATED);
        assertThat(p.getRequestTimeout()).isNull();
        assertThat(p.getMaxInFlight()).isNull();
        assertThat(p.getRequestTimeoutStatus()).isEqualTo(503);
        assertThat(p.getRetryAfterMax()).isEqualTo(java.time.Duration.ofSeconds(1));
        assertThat(p.isInlineSessions()).isTrue();
        assertThat(p.getStream().limits()).isEqualTo(StreamLimits.DEFAULT);
        assertThat(p.getAdmission().getLimit()).isEqualTo(CoschedWebProperties.AdmissionLimit.FIXED);
        assertThat(p.admissionControl())
                .hasToString(AdmissionControl.fixed(null).toString())
                .hasToString("AdmissionControl[limit=none, queue=0 for PT0.1S, status=503, retryAfterMax=PT1S]");
    }

    @Test
    void anAdaptiveLimitRangesFromItsFloorToMaxInFlightOrAThousand() {
        new ApplicationContextRunner()
                .withUserConfiguration(WebProperties.class)
                .withPropertyValues(
                        "cosched.web.admission.limit=adaptive",
                        "cosched.web.admission.min-limit=12",
                        "cosched.web.admission.tolerance=1.5",
                        "cosched.web.admission.queue-size=20",
                        "cosched.web.admission.queue-timeout=250ms",
                        "cosched.web.admission.status=429")
                .run(context -> assertThat(
                                context.getBean(CoschedWebProperties.class).admissionControl())
                        .hasToString("AdmissionControl[limit=adaptive 12..1000 (tolerance 1.5), queue=20 for PT0.25S,"
                                + " status=429, retryAfterMax=PT1S]"));
        new ApplicationContextRunner()
                .withUserConfiguration(WebProperties.class)
                .withPropertyValues("cosched.web.admission.limit=adaptive", "cosched.web.max-in-flight=300")
                .run(context -> assertThat(
                                context.getBean(CoschedWebProperties.class).admissionControl())
                        .hasToString("AdmissionControl[limit=adaptive 10..300 (tolerance 2.0), queue=0 for PT0.1S,"
                                + " status=503, retryAfterMax=PT1S]"));
    }

    @Test
    void failsToStartOnBadAdmissionSettings(CapturedOutput output) {
        assertStartupFails(
                output,
                "cosched.web.admission.status=500",
                "Property: cosched.web.admission.status",
                "admission.status: 500 (must be 503 or 429)");
        assertStartupFails(
                output,
                "cosched.web.admission.min-limit=0",
                "Property: cosched.web.admission.min-limit",
                "admission.min-limit: 0 (expected: > 0)");
        assertStartupFails(
                output,
                "cosched.web.admission.tolerance=1",
                "Property: cosched.web.admission.tolerance",
                "admission.tolerance: 1.0 (expected: > 1 and <= 100)");
        assertStartupFails(
                output,
                "cosched.web.admission.queue-size=-1",
                "Property: cosched.web.admission.queue-size",
                "admission.queue-size: -1 (expected: >= 0)");
        assertStartupFails(
                output,
                "cosched.web.admission.queue-timeout=0s",
                "Property: cosched.web.admission.queue-timeout",
                "admission.queue-timeout: PT0S (expected: > 0)");
        assertStartupFails(
                output,
                "cosched.web.admission.limit=sometimes",
                "Property: cosched.web.admission.limit",
                "FIXED",
                "ADAPTIVE");
    }

    @Test
    void anAdaptiveLimitWhoseCeilingIsBelowItsFloorIsRefusedNamingBoth() {
        CoschedWebProperties p = new CoschedWebProperties();
        p.getAdmission().setLimit(CoschedWebProperties.AdmissionLimit.ADAPTIVE);
        p.getAdmission().setMinLimit(50);
        p.setMaxInFlight(20);
        assertThatThrownBy(p::admissionControl)
                .hasMessage("max-in-flight: 20 (expected: >= cosched.web.admission.min-limit, 50, with"
                        + " cosched.web.admission.limit=adaptive)");
    }

    @Test
    void failsToStartOnAnUnknownWebMode(CapturedOutput output) {
        assertStartupFails(
                output, "cosched.web.mode=sometimes", "Property: cosched.web.mode", "ANNOTATED", "ALL", "OFF");
    }

    @Test
    void failsToStartOnANegativeRequestTimeout(CapturedOutput output) {
        assertStartupFails(
                output,
                "cosched.web.request-timeout=-1s",
                "Property: cosched.web.request-timeout",
                "request-timeout: PT-1S (expected: > 0)");
    }

    @Test
    void failsToStartOnARequestTimeoutStatusOtherThan503Or504(CapturedOutput output) {
        assertStartupFails(
                output,
                "cosched.web.request-timeout-status=500",
                "Property: cosched.web.request-timeout-status",
                "request-timeout-status: 500 (must be 503 or 504)");
    }

    @Test
    void failsToStartOnARetryAfterMaxBelowOneSecond(CapturedOutput output) {
        assertStartupFails(
                output,
                "cosched.web.retry-after-max=500ms",
                "Property: cosched.web.retry-after-max",
                "retry-after-max: PT0.5S (expected: from 1s to 1h)");
    }

    @Test
    void failsToStartOnAZeroMaxInFlight(CapturedOutput output) {
        assertStartupFails(
                output,
                "cosched.web.max-in-flight=0",
                "Property: cosched.web.max-in-flight",
                "max-in-flight: 0 (expected: > 0)");
    }

    @Test
    void failsToStartOnANegativeStreamReadTimeoutAndZeroMeansNoLimit(CapturedOutput output) {
        assertStartupFails(
                output,
                "cosched.web.stream.read-timeout=-1s",
                "Property: cosched.web.stream.read-timeout",
                "stream.read-timeout: PT-1S (expected: >= 0)");
        assertStartupFails(
                output,
                "cosched.web.stream.write-timeout=0s",
                "Property: cosched.web.stream.write-timeout",
                "stream.write-timeout: PT0S (expected: > 0)");
        assertStartupFails(
                output,
                "cosched.web.stream.max-duration=0s",
                "Property: cosched.web.stream.max-duration",
                "stream.max-duration: PT0S (expected: > 0)");
        assertStartupFails(
                output,
                "cosched.web.stream.first-byte-timeout=0s",
                "Property: cosched.web.stream.first-byte-timeout",
                "stream.first-byte-timeout: PT0S (expected: > 0)");
        assertStartupFails(
                output,
                "cosched.web.stream.event-send-buffer=-1B",
                "Property: cosched.web.stream.event-send-buffer",
                "stream.event-send-buffer: -1B (expected: from 0, the kernel's, to 2GB)");
        assertStartupFails(
                output,
                "cosched.web.stream.shutdown-grace=-1s",
                "Property: cosched.web.stream.shutdown-grace",
                "stream.shutdown-grace: PT-1S (expected: >= 0)");
        new ApplicationContextRunner()
                .withUserConfiguration(WebProperties.class)
                .withPropertyValues(
                        "cosched.web.stream.read-timeout=0",
                        "cosched.web.stream.write-timeout=5m",
                        "cosched.web.stream.max-duration=30m")
                .run(context -> assertThat(context.getBean(CoschedWebProperties.class)
                                .getStream()
                                .limits())
                        .isEqualTo(new StreamLimits(null, Duration.ofMinutes(5), Duration.ofMinutes(30))));
        new ApplicationContextRunner()
                .withUserConfiguration(WebProperties.class)
                .withPropertyValues(
                        "cosched.web.stream.first-byte-timeout=5s", "cosched.web.stream.event-send-buffer=0")
                .run(context -> assertThat(context.getBean(CoschedWebProperties.class)
                                .getStream()
                                .limits())
                        .isEqualTo(new StreamLimits(Duration.ofSeconds(60), null, null, Duration.ofSeconds(5), 0)));
    }

    private static void assertStartupFails(CapturedOutput output, String property, String... expected) {
        StartupFailures.assertStartupFails(WebProperties.class, output, property, expected);
    }

    /** The properties bound as the web auto-configuration binds them. */
    @Configuration(proxyBeanMethods = false)
    @EnableConfigurationProperties(CoschedWebProperties.class)
    static class WebProperties {}
}
