/**
 * Auto-configuration of Spring's blocking HTTP clients on cosched's event loops: the request-factory
 * builder that Spring Boot's {@code RestClient.Builder} and {@code RestTemplateBuilder} use.
 */
@NullMarked
package io.cosched.spring.boot.autoconfigure.http;

import org.jspecify.annotations.NullMarked;
