package io.cosched.demo;

import java.time.Instant;

/** One order. {@code status} is PENDING, CONFIRMED or EXPIRED. */
public record Order(long id, String customer, String item, int quantity, String status, Instant createdAt) {}
