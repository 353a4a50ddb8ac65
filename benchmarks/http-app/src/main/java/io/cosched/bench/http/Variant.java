package io.cosched.bench.http;

/** How the handlers are written; each variant's controller is active only for its value of {@code bench.variant}. */
public enum Variant {
    /** Blocking bodies with {@code @RunAsCoroutine}: cosched (carrier or fallback mode, by JVM flags). */
    COSCHED,
    /** {@code Mono} handlers, WebClient downstream: the practical limit of WebFlux. */
    REACTIVE,
    /** Blocking bodies wrapped in {@code Mono.fromCallable(..).subscribeOn(Schedulers.boundedElastic())}. */
    ELASTIC,
    /** Blocking bodies run by Spring Boot on the JDK's virtual threads ({@code spring.threads.virtual.enabled=true}). */
    VIRTUAL
}
