/**
 * What Actuator and Micrometer show of cosched: the {@code cosched} endpoint, the health indicators
 * and the meters. API: the types an application may extend or read; their beans come from
 * {@code io.cosched.spring.boot.autoconfigure.actuate}.
 */
@NullMarked
package io.cosched.spring.boot.actuate;

import org.jspecify.annotations.NullMarked;
