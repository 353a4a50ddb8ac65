package io.cosched.spring.boot.autoconfigure;

import io.cosched.CarrierModeUnavailableException;
import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/** Explains {@code cosched.carrier.require=true} on a JVM without the add-opens flag. */
final class CarrierModeFailureAnalyzer extends AbstractFailureAnalyzer<CarrierModeUnavailableException> {

    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, CarrierModeUnavailableException cause) {
        return new FailureAnalysis(
                "cosched.carrier.require is true, but coroutines cannot run on cosched's carriers: "
                        + cause.getMessage(),
                "Start the JVM with --add-opens java.base/java.lang=ALL-UNNAMED (on the command line; in "
                        + "JAVA_TOOL_OPTIONS as --add-opens=java.base/java.lang=ALL-UNNAMED; or as "
                        + "'Add-Opens: java.base/java.lang' in the executable jar's manifest), "
                        + "or set cosched.carrier.require=false to run coroutines as ordinary virtual threads.",
                cause);
    }
}
