package io.cosched.spring.web.server;

import io.cosched.spring.web.RunAsCoroutine;
import org.springframework.core.KotlinDetector;
import org.springframework.core.ReactiveAdapterRegistry;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.web.method.HandlerMethod;

import java.lang.reflect.Method;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Predicate;

/**
 * Which handler methods run as coroutines: non-reactive ones, and in annotated mode only those
 * marked {@link RunAsCoroutine} (on the method or its class). Spring asks on every request, so
 * the answer is cached per handler.
 */
final class CoroutineHandlerSelector implements Predicate<HandlerMethod> {

    private final boolean annotatedOnly;
    private final ReactiveAdapterRegistry reactiveTypes = ReactiveAdapterRegistry.getSharedInstance();
    // by bean type, then method (a class-level annotation depends on the type): two lookups and no
    // allocation per request, where a composite key would allocate one
    private final Map<Class<?>, Map<Method, Boolean>> decisions = new ConcurrentHashMap<>();

    CoroutineHandlerSelector(boolean annotatedOnly) {
        this.annotatedOnly = annotatedOnly;
    }

    @Override
    public boolean test(HandlerMethod handler) {
        Map<Method, Boolean> byMethod = decisions.computeIfAbsent(handler.getBeanType(), t -> new ConcurrentHashMap<>());
        Boolean decision = byMethod.get(handler.getMethod());
        if (decision == null) {
            decision = decide(handler);
            byMethod.put(handler.getMethod(), decision);
        }
        return decision;
    }

    private boolean decide(HandlerMethod handler) {
        Method method = handler.getMethod();
        if (reactiveTypes.getAdapter(method.getReturnType()) != null || KotlinDetector.isSuspendingFunction(method)) {
            return false; // it returns without blocking: nothing to gain
        }
        if (!annotatedOnly) {
            return true;
        }
        return AnnotatedElementUtils.hasAnnotation(method, RunAsCoroutine.class)
                || AnnotatedElementUtils.hasAnnotation(handler.getBeanType(), RunAsCoroutine.class);
    }
}
