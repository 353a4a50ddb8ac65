package io.cosched.spring.boot.autoconfigure;

import io.cosched.TransportUnavailableException;
import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/** Explains {@code cosched.io.transport=epoll} on a machine where Netty's native epoll transport is unavailable. */
final class TransportFailureAnalyzer extends AbstractFailureAnalyzer<TransportUnavailableException> {

    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, TransportUnavailableException cause) {
        return new FailureAnalysis(
                "cosched.io.transport is " + cause.transport().name().toLowerCase(java.util.Locale.ROOT)
                        + ", but that transport is unavailable here: " + cause.getMessage(),
                "Set cosched.io.transport=auto (epoll where available, else nio) or nio. For epoll, run on Linux "
                        + "with io.netty:netty-transport-native-epoll for this platform (linux-x86_64 or linux-aarch_64) "
                        + "on the class path; cosched-spring-boot-starter brings both.",
                cause);
    }
}
