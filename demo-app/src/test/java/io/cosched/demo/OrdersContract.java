package io.cosched.demo;

import static org.assertj.core.api.Assertions.assertThat;

import io.cosched.IOManager;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.web.server.LocalServerPort;
import tools.jackson.databind.JsonNode;

/**
 * The orders API against a real database, over HTTP, with the handlers running as coroutines. Each
 * subclass picks the database: embedded H2, a PostgreSQL server, or a PostgreSQL container.
 */
@Timeout(120)
abstract class OrdersContract {

    @LocalServerPort
    int port;

    @Autowired
    OrderRepository repository;

    @Autowired
    OrderExpiryJob expiry;

    @Autowired
    IOManager io;

    Api api;

    @BeforeEach
    void client() {
        api = new Api(port);
    }

    @Test
    void listsTheSampleOrdersNewestFirst() throws Exception {
        HttpResponse<String> r = api.get("/api/orders?limit=1000");
        assertThat(r.statusCode()).isEqualTo(200);
        JsonNode orders = Api.json(r);
        assertThat(orders.size()).isGreaterThanOrEqualTo(5);
        assertThat(orders.get(0).get("id").asLong())
                .isGreaterThan(orders.get(1).get("id").asLong());
        assertThat(orders.toString()).contains("\"customer\":\"ada\"", "\"item\":\"keyboard\"");
    }

    @Test
    void createsAnOrderAndReadsItBack() throws Exception {
        HttpResponse<String> created =
                api.post("/api/orders", "{\"customer\":\"hopper\",\"item\":\"compiler\",\"quantity\":2}");
        assertThat(created.statusCode()).isEqualTo(201);
        JsonNode order = Api.json(created);
        long id = order.get("id").asLong();
        assertThat(created.headers().firstValue("Location")).hasValue("/api/orders/" + id);
        assertThat(order.get("status").asString()).isEqualTo("PENDING");

        JsonNode read = Api.json(api.get("/api/orders/" + id));
        assertThat(read.get("customer").asString()).isEqualTo("hopper");
        assertThat(read.get("quantity").asInt()).isEqualTo(2);
        assertThat(api.get("/api/fn/orders/" + id + "/summary").body()).isEqualTo("2 x compiler for hopper (PENDING)");
    }

    @Test
    void unknownOrdersAre404AndBadOnesAre400NamingTheField() throws Exception {
        assertThat(api.get("/api/orders/987654321").statusCode()).isEqualTo(404);
        assertThat(api.get("/api/fn/orders/987654321/summary").statusCode()).isEqualTo(404);
        HttpResponse<String> bad = api.post("/api/orders", "{\"customer\":\"x\",\"item\":\"y\",\"quantity\":0}");
        assertThat(bad.statusCode()).isEqualTo(400);
        assertThat(Api.json(bad).get("detail").asString()).isEqualTo("quantity: 0 (expected: 1..1000)");
        assertThat(api.get("/api/orders?limit=0").statusCode()).isEqualTo(400);
    }

    @Test
    void theExpiryJobExpiresStalePendingOrdersAndIsATimerOnTheLoops() throws Exception {
        Order stale = repository.create("turing", "tape", 1, Instant.now().minus(Duration.ofHours(1)));
        Order fresh = repository.create("lovelace", "engine", 1, Instant.now());
        assertThat(expiry.expireNow()).isGreaterThanOrEqualTo(1);
        assertThat(repository.findById(stale.id()))
                .get()
                .extracting(Order::status)
                .isEqualTo("EXPIRED");
        assertThat(repository.findById(fresh.id()))
                .get()
                .extracting(Order::status)
                .isEqualTo("PENDING");
        assertThat(io.timers().pending()).as("the recurring expiry timer").isGreaterThanOrEqualTo(1);
    }

    @Test
    void handlersRunAsCoroutinesOnTheEventLoops() throws Exception {
        long before = io.stats().completedTasks();
        for (int i = 0; i < 5; i++) {
            assertThat(api.get("/api/orders/1").statusCode()).isEqualTo(200);
        }
        assertThat(io.stats().completedTasks() - before).isGreaterThanOrEqualTo(5);
    }
}
