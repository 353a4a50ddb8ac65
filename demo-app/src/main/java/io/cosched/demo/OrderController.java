package io.cosched.demo;

import io.cosched.spring.web.RunAsCoroutine;
import java.net.URI;
import java.time.Clock;
import java.util.List;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/**
 * The orders API in blocking style: every method calls JDBC directly, and {@code @RunAsCoroutine}
 * makes each request a coroutine on the event loop that read it. A blocked JDBC call parks the
 * coroutine; the loop serves other connections meanwhile.
 */
@RestController
@RequestMapping("/api/orders")
@RunAsCoroutine
public class OrderController {

    private final OrderRepository orders;
    private final Clock clock;

    public OrderController(OrderRepository orders, Clock clock) {
        this.orders = orders;
        this.clock = clock;
    }

    @GetMapping
    public List<Order> list(@RequestParam(defaultValue = "50") int limit) {
        return orders.findRecent(Checks.between("limit", limit, 1, 1000));
    }

    @GetMapping("/{id}")
    public ResponseEntity<Order> get(@PathVariable long id) {
        return ResponseEntity.of(orders.findById(id));
    }

    @PostMapping
    public ResponseEntity<Order> create(@RequestBody NewOrder order) {
        order.check();
        Order created = orders.create(order.customer(), order.item(), order.quantity(), clock.instant());
        return ResponseEntity.created(URI.create("/api/orders/" + created.id())).body(created);
    }

    /** What a client sends to create an order. */
    public record NewOrder(String customer, String item, int quantity) {

        void check() {
            if (customer == null || customer.isBlank()) {
                throw new IllegalArgumentException("customer: '" + customer + "' (expected: a non-blank name)");
            }
            if (item == null || item.isBlank()) {
                throw new IllegalArgumentException("item: '" + item + "' (expected: a non-blank item)");
            }
            Checks.between("quantity", quantity, 1, 1000);
        }
    }
}
