package io.cosched.demo;

import static org.springframework.web.reactive.function.server.RouterFunctions.route;

import io.cosched.spring.web.CoroutineHandlers;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.web.reactive.function.server.RouterFunction;
import org.springframework.web.reactive.function.server.ServerResponse;

/** A functional endpoint whose blocking handler runs as a coroutine through the starter's helper. */
@Configuration(proxyBeanMethods = false)
class Routes {

    @Bean
    RouterFunction<ServerResponse> orderSummaryRoute(CoroutineHandlers coroutines, OrderRepository orders) {
        return route().GET("/api/fn/orders/{id}/summary", coroutines.blocking(request -> {
                    long id = Long.parseLong(request.pathVariable("id"));
                    return orders.findById(id) // blocking JDBC, inside the request's coroutine
                            .map(o -> ServerResponse.ok()
                                    .bodyValue(o.quantity() + " x " + o.item() + " for " + o.customer() + " ("
                                            + o.status() + ")"))
                            .orElseGet(() -> ServerResponse.notFound().build());
                }))
                .build();
    }
}
