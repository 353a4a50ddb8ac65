package io.cosched.spring.boot.autoconfigure.web;

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

    private record Key(Class<?> beanType, Method method) {
    }

    private final boolean annotatedOnly;
    private final ReactiveAdapterRegistry reactiveTypes = ReactiveAdapterRegistry.getSharedInstance();
    private final Map<Key, Boolean> decisions = new ConcurrentHashMap<>();

    CoroutineHandlerSelector(boolean annotatedOnly) {
        this.annotatedOnly = annotatedOnly;
    }

    @Override
    public boolean test(HandlerMethod handler) {
        return decisions.computeIfAbsent(new Key(handler.getBeanType(), handler.getMethod()), k -> decide(handler));
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
