package io.cosched.spring.boot.autoconfigure.web;

import static org.springframework.web.reactive.function.server.RouterFunctions.route;
import static org.springframework.web.reactive.function.server.ServerResponse.ok;

import io.cosched.Coroutines;
import io.cosched.spring.boot.autoconfigure.CoschedAutoConfiguration;
import io.cosched.spring.web.CoroutineHandlers;
import io.cosched.spring.web.RunAsCoroutine;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ReactiveWebApplicationContextRunner;
import org.springframework.boot.webflux.autoconfigure.HttpHandlerAutoConfiguration;
import org.springframework.boot.webflux.autoconfigure.WebFluxAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.test.web.reactive.server.WebTestClient;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.reactive.function.server.RouterFunction;
import org.springframework.web.reactive.function.server.ServerResponse;

/**
 * A {@code WebTestClient} bound to the application, as a {@code @SpringBootTest} without a server or a
 * {@code @AutoConfigureWebTestClient} test uses it: no server, so the exchange has no connection and
 * no native request. Coroutine handlers still run as coroutines (placed by the IOManager).
 */
@Timeout(60)
class MockServerWebTest {

    private final ReactiveWebApplicationContextRunner runner = new ReactiveWebApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(
                    CoschedAutoConfiguration.class,
                    CoschedWebStreamingAutoConfiguration.class,
                    CoschedWebFluxAutoConfiguration.class,
                    WebFluxAutoConfiguration.class,
                    HttpHandlerAutoConfiguration.class))
            .withUserConfiguration(Handlers.class);

    @Test
    void annotatedAndFunctionalCoroutineHandlersAnswerAWebTestClientBoundToTheApplication() {
        runner.run(context -> {
            WebTestClient client =
                    WebTestClient.bindToApplicationContext(context).build();
            client.get()
                    .uri("/annotated")
                    .exchange()
                    .expectStatus()
                    .isOk()
                    .expectBody(String.class)
                    .isEqualTo("in a coroutine: true");
            client.get()
                    .uri("/functional")
                    .exchange()
                    .expectStatus()
                    .isOk()
                    .expectBody(String.class)
                    .isEqualTo("in a coroutine: true");
        });
    }

    @Configuration(proxyBeanMethods = false)
    static class Handlers {

        @Bean
        Annotated annotated() {
            return new Annotated();
        }

        @Bean
        RouterFunction<ServerResponse> functional(CoroutineHandlers coroutines) {
            return route().GET("/functional", coroutines.blocking(request -> ok().bodyValue(where())))
                    .build();
        }
    }

    @RestController
    static class Annotated {

        @GetMapping("/annotated")
        @RunAsCoroutine
        String annotated() {
            return where();
        }
    }

    static String where() {
        return "in a coroutine: " + Coroutines.current().isPresent();
    }
}
