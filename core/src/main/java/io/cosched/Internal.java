package io.cosched;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Marks a type or member that is public only so that another of cosched's modules can reach it (the starter's
 * auto-configuration wiring it, a module's engine using it): not API. It may change or go in any release, and an
 * application should not call it. What is API is listed in docs/architecture.md ("What is API").
 */
@Documented
@Retention(RetentionPolicy.CLASS)
@Target({ElementType.TYPE, ElementType.METHOD, ElementType.CONSTRUCTOR, ElementType.FIELD})
public @interface Internal {}
