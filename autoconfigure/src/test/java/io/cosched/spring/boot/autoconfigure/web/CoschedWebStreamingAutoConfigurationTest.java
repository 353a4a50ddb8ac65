package io.cosched.spring.boot.autoconfigure.web;

import static org.assertj.core.api.Assertions.assertThat;

import io.cosched.IOManager;
import io.cosched.spring.boot.autoconfigure.CoschedAutoConfiguration;
import io.cosched.spring.web.stream.StreamLimits;
import io.cosched.spring.web.stream.StreamingSupport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.context.runner.ReactiveWebApplicationContextRunner;
import org.springframework.boot.webflux.autoconfigure.WebFluxAutoConfiguration;
import org.springframework.core.Ordered;
import org.springframework.web.reactive.HandlerResultHandler;
import org.springframework.web.reactive.config.WebFluxConfigurer;
import org.springframework.web.server.WebExceptionHandler;
import reactor.core.scheduler.Schedulers;

/**
 * The streaming beans: there in every reactive web application, with cosched's handlers or without them, ahead of
 * Spring's own where order matters, backing off for the application's own support, and absent outside WebFlux.
 */
@Timeout(60)
class CoschedWebStreamingAutoConfigurationTest {

    private final ReactiveWebApplicationContextRunner runner = new ReactiveWebApplicationContextRunner()
            .withPropertyValues("cosched.io.threads=1", "cosched.scheduler.threads=1")
            .withConfiguration(
                    AutoConfigurations.of(CoschedAutoConfiguration.class, CoschedWebStreamingAutoConfiguration.class));

    @Test
    void wiresTheArgumentsTheBodyReaderAndTheErrorsAheadOfBootsErrorHandler() {
        runner.run(context -> {
            assertThat(context).hasSingleBean(StreamingSupport.class);
            assertThat(context.getBeansOfType(WebFluxConfigurer.class)).containsOnlyKeys("coschedStreamingConfigurer");
            WebExceptionHandler errors = context.getBean("coschedStreamErrors", WebExceptionHandler.class);
            assertThat(((Ordered) errors).getOrder())
                    .as("ahead of Boot's error handler (-1), one ahead of the request path's 503s")
                    .isEqualTo(StreamingSupport.ERRORS_ORDER)
                    .isLessThan(-1);
            // without WebFlux's own configuration there are no codecs to write streamed answers with
            assertThat(context).doesNotHaveBean(HandlerResultHandler.class);
        });
    }

    @Test
    void writesStreamedAnswersWithWebFluxsCodecsWhereWebFluxIsConfigured() {
        runner.withConfiguration(AutoConfigurations.of(WebFluxAutoConfiguration.class))
                .run(context -> assertThat(context.getBeansOfType(HandlerResultHandler.class))
                        .containsKey("coschedStreamResultHandler"));
    }

    @Test
    void streamsStillWorkDetachedWithCoschedDisabled() {
        runner.withPropertyValues("cosched.enabled=false")
                .run(context -> assertThat(context)
                        .doesNotHaveBean(IOManager.class)
                        .hasSingleBean(StreamingSupport.class)
                        .hasBean("coschedStreamErrors"));
    }

    @Test
    void backsOffForTheApplicationsOwnSupport() {
        StreamingSupport own = new StreamingSupport(StreamLimits.DEFAULT, Runnable::run);
        runner.withBean("ownStreaming", StreamingSupport.class, () -> own).run(context -> {
            assertThat(context).hasSingleBean(StreamingSupport.class);
            assertThat(context.getBean(StreamingSupport.class)).isSameAs(own);
            assertThat(context).hasBean("coschedStreamingConfigurer"); // wired with the application's support
        });
    }

    @Test
    void appliesNothingWithoutSpringWebFlux() {
        runner.withClassLoader(new FilteredClassLoader(WebFluxConfigurer.class))
                .run(context -> assertThat(context).doesNotHaveBean(StreamingSupport.class));
    }

    @Test
    void appliesNothingWithoutReactorsSchedulers() {
        runner.withClassLoader(new FilteredClassLoader(Schedulers.class))
                .run(context -> assertThat(context).doesNotHaveBean(StreamingSupport.class));
    }

    @Test
    void appliesNothingInAnApplicationThatIsNotReactive() {
        new ApplicationContextRunner()
                .withPropertyValues("cosched.io.threads=1", "cosched.scheduler.threads=1")
                .withConfiguration(AutoConfigurations.of(
                        CoschedAutoConfiguration.class, CoschedWebStreamingAutoConfiguration.class))
                .run(context -> assertThat(context).doesNotHaveBean(StreamingSupport.class));
    }
}
