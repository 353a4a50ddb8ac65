package io.cosched.demo;

import java.sql.Timestamp;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.stereotype.Repository;

/** Orders in a SQL database (H2 by default, PostgreSQL with the {@code postgres} profile), plain JDBC. */
@Repository
public class OrderRepository {

    private static final String COLUMNS = "id, customer, item, quantity, status, created_at";

    private final JdbcClient jdbc;

    public OrderRepository(JdbcClient jdbc) {
        this.jdbc = jdbc;
    }

    public List<Order> findRecent(int limit) {
        return jdbc.sql("SELECT " + COLUMNS + " FROM orders ORDER BY id DESC LIMIT :limit")
                .param("limit", limit)
                .query(OrderRepository::map)
                .list();
    }

    public Optional<Order> findById(long id) {
        return jdbc.sql("SELECT " + COLUMNS + " FROM orders WHERE id = :id")
                .param("id", id)
                .query(OrderRepository::map)
                .optional();
    }

    public Order create(String customer, String item, int quantity, Instant now) {
        org.springframework.jdbc.support.GeneratedKeyHolder keys =
                new org.springframework.jdbc.support.GeneratedKeyHolder();
        jdbc.sql("INSERT INTO orders (customer, item, quantity, status, created_at) "
                        + "VALUES (:customer, :item, :quantity, 'PENDING', :createdAt)")
                .param("customer", customer)
                .param("item", item)
                .param("quantity", quantity)
                .param("createdAt", Timestamp.from(now))
                .update(keys, "id");
        long id = keys.getKeyAs(Number.class).longValue();
        return new Order(id, customer, item, quantity, "PENDING", now);
    }

    /** Marks pending orders created before {@code cutoff} as EXPIRED; returns how many. */
    public int expirePendingBefore(Instant cutoff) {
        return jdbc.sql("UPDATE orders SET status = 'EXPIRED' WHERE status = 'PENDING' AND created_at < :cutoff")
                .param("cutoff", Timestamp.from(cutoff))
                .update();
    }

    private static Order map(java.sql.ResultSet rs, int row) throws java.sql.SQLException {
        return new Order(
                rs.getLong("id"),
                rs.getString("customer"),
                rs.getString("item"),
                rs.getInt("quantity"),
                rs.getString("status"),
                rs.getTimestamp("created_at").toInstant());
    }
}
