package io.cosched.demo;

import org.springframework.boot.test.context.SpringBootTest;

/** The orders API on the default embedded H2 database. */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class H2OrdersTest extends OrdersContract {}
