package io.cosched.spring.boot.autoconfigure.web;

import io.cosched.spring.web.stream.MultipartLimits;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.boot.webflux.autoconfigure.ReactiveMultipartProperties;
import org.springframework.util.ClassUtils;

/**
 * A {@code MultipartStream}'s limits from Spring Boot's {@code spring.webflux.multipart.*}, as Boot gives them to
 * Spring's own multipart readers; Spring's defaults where Boot's WebFlux support is absent.
 */
final class BootMultipartLimits {

    private static final boolean BOOT_WEBFLUX = ClassUtils.isPresent(
            "org.springframework.boot.webflux.autoconfigure.ReactiveMultipartProperties",
            BootMultipartLimits.class.getClassLoader());

    private BootMultipartLimits() {}

    static MultipartLimits of(BeanFactory beans) {
        return BOOT_WEBFLUX ? FromProperties.of(beans) : MultipartLimits.springDefaults();
    }

    /** Loaded only with Boot's WebFlux support present. */
    private static final class FromProperties {
        static MultipartLimits of(BeanFactory beans) {
            ReactiveMultipartProperties p =
                    beans.getBeanProvider(ReactiveMultipartProperties.class).getIfAvailable();
            if (p == null) {
                return MultipartLimits.springDefaults();
            }
            long headers = p.getMaxHeadersSize().toBytes();
            return new MultipartLimits(
                    p.getMaxParts(),
                    (int) Math.min(Integer.MAX_VALUE, headers),
                    p.getMaxDiskUsagePerPart().toBytes(),
                    p.getHeadersCharset());
        }
    }
}
