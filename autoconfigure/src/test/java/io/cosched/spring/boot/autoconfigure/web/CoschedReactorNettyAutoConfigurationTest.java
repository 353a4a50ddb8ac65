package io.cosched.spring.boot.autoconfigure.web;

import static org.assertj.core.api.Assertions.assertThat;

import io.cosched.IOManager;
import io.cosched.spring.boot.autoconfigure.CoschedAutoConfiguration;
import io.cosched.spring.web.netty.GlobalLoops;
import io.cosched.spring.web.netty.IOManagerLoopResources;
import io.cosched.spring.web.netty.ServerConnections;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ReactiveWebApplicationContextRunner;
import org.springframework.http.client.ReactorResourceFactory;
import reactor.netty.resources.LoopResources;

/** Reactor Netty on the IOManager's loops: the server's, Boot's clients' and the global clients'. */
@Timeout(60)
class CoschedReactorNettyAutoConfigurationTest {

    private final ReactiveWebApplicationContextRunner runner = new ReactiveWebApplicationContextRunner()
            .withPropertyValues("cosched.io.threads=1", "cosched.scheduler.threads=1")
            .withConfiguration(
                    AutoConfigurations.of(CoschedAutoConfiguration.class, CoschedReactorNettyAutoConfiguration.class));

    @Test
    void theServerAndTheClientsRunOnTheIOManagersLoops() {
        runner.run(context -> {
            LoopResources loops = context.getBean(ReactorResourceFactory.class).getLoopResources();
            assertThat(loops).isInstanceOf(IOManagerLoopResources.class);
            assertThat(loops.onServer(true))
                    .isSameAs(context.getBean(IOManager.class).eventLoopGroup());
            assertThat(context).hasSingleBean(GlobalLoops.class).hasSingleBean(ServerConnections.class);
        });
    }

    @Test
    void backsOffWhenTheApplicationDefinesItsOwnReactorResourceFactory() {
        ReactorResourceFactory own = new ReactorResourceFactory();
        runner.withBean("myResources", ReactorResourceFactory.class, () -> own)
                .run(context -> assertThat(context.getBean(ReactorResourceFactory.class))
                        .isSameAs(own));
    }

    @Test
    void leavesReactorNettysGlobalResourcesAloneWhenAskedTo() {
        runner.withPropertyValues("cosched.web-client.global-loops=false")
                .run(context -> assertThat(context)
                        .doesNotHaveBean(GlobalLoops.class)
                        .hasSingleBean(ReactorResourceFactory.class));
    }

    @Test
    void appliesNothingWithoutSpringsReactorResourceFactory() {
        runner.withClassLoader(new FilteredClassLoader(ReactorResourceFactory.class))
                .run(context -> assertThat(context)
                        .doesNotHaveBean(GlobalLoops.class)
                        .doesNotHaveBean(ServerConnections.class));
    }

    @Test
    void appliesNothingWithoutReactorNettysLoopResources() {
        runner.withClassLoader(new FilteredClassLoader(LoopResources.class))
                .run(context -> assertThat(context)
                        .doesNotHaveBean(ReactorResourceFactory.class)
                        .doesNotHaveBean(GlobalLoops.class));
    }

    @Test
    void isOffWhenCoschedIsDisabledEvenBesideTheApplicationsOwnIOManager() {
        runner.withPropertyValues("cosched.enabled=false")
                .withBean(
                        IOManager.class,
                        () -> IOManager.builder().name("own").threads(1).build())
                .run(context -> assertThat(context)
                        .doesNotHaveBean(ReactorResourceFactory.class)
                        .doesNotHaveBean(GlobalLoops.class));
    }
}
