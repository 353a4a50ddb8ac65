/**
 * Auto-configuration of JDBC on cosched's event loops: a HikariCP {@code DataSource} for PostgreSQL
 * becomes a {@link io.cosched.jdbc.LoopBoundDataSource}, one connection pool per loop.
 */
@NullMarked
package io.cosched.spring.boot.autoconfigure.jdbc;

import org.jspecify.annotations.NullMarked;
