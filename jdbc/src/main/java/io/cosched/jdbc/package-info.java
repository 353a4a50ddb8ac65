/**
 * JDBC on cosched's event loops: a HikariCP {@code DataSource} with one connection pool per loop, whose
 * PostgreSQL connections are Netty channels on that loop, so that the loop that reads a query's
 * answer resumes the coroutine that waits for it.
 */
@NullMarked
package io.cosched.jdbc;

import org.jspecify.annotations.NullMarked;
