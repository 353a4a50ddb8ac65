/**
 * Spring Boot auto-configuration of cosched's schedulers: beans built from {@code cosched.*}
 * properties, their lifecycle around the web server, and the start-up failure analyzers.
 */
@NullMarked
package io.cosched.spring.boot.autoconfigure;

import org.jspecify.annotations.NullMarked;
