package io.cosched;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Each Surefire execution states which mode it expects; a broken probe fails here instead of skipping tests. */
@Timeout(120)
class ModeTest {

    @Test
    void schedulersReportTheModeThisJvmWasStartedFor() {
        String expected = System.getProperty("cosched.test.expectedMode");
        assertThat(expected).as("surefire sets cosched.test.expectedMode").isIn("carrier", "fallback");
        try (IOManager io = IOManager.builder().threads(1).build();
                PoolScheduler pool = PoolScheduler.builder().threads(1).build()) {
            io.start();
            pool.start();
            SchedulerStats.Mode mode = SchedulerStats.Mode.valueOf(expected.toUpperCase(java.util.Locale.ROOT));
            assertThat(io.stats().mode()).isEqualTo(mode);
            assertThat(pool.stats().mode()).isEqualTo(mode);
            assertThat(io.isCarrierMode()).isEqualTo(mode == SchedulerStats.Mode.CARRIER);
            assertThat(pool.isCarrierMode()).isEqualTo(mode == SchedulerStats.Mode.CARRIER);
        }
    }

    @Test
    void withoutTheAddOpensFlagEverythingFallsBackWithOneWarningNamingTheFlag() throws Exception {
        TestSupport.Forked run = TestSupport.fork(
                FallbackProgram.class, List.of("--enable-native-access=ALL-UNNAMED"), Duration.ofSeconds(60));
        assertThat(run.exitCode()).as(run.output()).isZero();
        assertThat(run.output())
                .contains("mode=FALLBACK")
                .contains("--add-opens java.base/java.lang=ALL-UNNAMED")
                .contains("sum=4950")
                .contains("CarrierModeUnavailableException")
                .contains("requireCarrierMode=true");
        assertThat(run.output().split("fallback mode", -1)).as("one warning").hasSize(2);
    }

    @Test
    void requiringCarrierModeBuildsWhenTheFlagIsPresent() {
        org.junit.jupiter.api.Assumptions.assumeTrue(TestSupport.carrierMode(), "needs carrier mode");
        try (IOManager io =
                IOManager.builder().threads(1).requireCarrierMode(true).build()) {
            io.start();
            assertThat(io.stats().mode()).isEqualTo(SchedulerStats.Mode.CARRIER);
        }
    }

    /** Runs in a JVM without add-opens. */
    public static final class FallbackProgram {
        public static void main(String[] args) throws Exception {
            try (IOManager io = IOManager.builder().threads(2).build()) {
                io.start();
                int sum = 0;
                for (int i = 0; i < 100; i++) {
                    int n = i;
                    sum += io.spawn(() -> {
                                Coroutines.sleep(Duration.ofMillis(1));
                                return n;
                            })
                            .join();
                }
                System.out.println("mode=" + io.stats().mode() + " sum=" + sum);
            }
            try {
                PoolScheduler.builder().requireCarrierMode(true).build();
                System.out.println("requireCarrierMode did not fail");
                System.exit(3);
            } catch (CarrierModeUnavailableException e) {
                System.out.println(e.getClass().getSimpleName() + ": " + e.getMessage());
            }
        }
    }

    @Test
    void badBuilderArgumentsNameTheArgumentTheValueAndTheRule() {
        assertThatThrownBy(() -> IOManager.builder().threads(0).build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("threads: 0 (expected: > 0)");
        assertThatThrownBy(() -> PoolScheduler.builder().threads(-2).build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("threads: -2 (expected: > 0)");
        assertThatThrownBy(() -> IOManager.builder().name(null).build())
                .isInstanceOf(NullPointerException.class)
                .hasMessageContaining("name: null");
        assertThatThrownBy(() -> PoolScheduler.builder().name("  ").build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("name: '  '");
        assertThatThrownBy(() -> IOManager.builder().transport(null).build())
                .isInstanceOf(NullPointerException.class)
                .hasMessageContaining("transport: null");
        assertThatThrownBy(() -> PoolScheduler.builder()
                        .stallThreshold(Duration.ofMillis(-1))
                        .build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("stallThreshold: PT-0.001S (expected: >= 0)");
        assertThatThrownBy(() -> IOManager.builder().stallThreshold(null).build())
                .isInstanceOf(NullPointerException.class)
                .hasMessageContaining("stallThreshold: null");
    }
}
