/**
 * The auto-configurations that make the endpoint, health indicators and meters of
 * {@code io.cosched.spring.boot.actuate} into beans. Wiring only.
 */
@NullMarked
package io.cosched.spring.boot.autoconfigure.actuate;

import org.jspecify.annotations.NullMarked;
