package io.cosched.spring.web.server;

import io.cosched.spring.web.EventStream;
import io.cosched.spring.web.MultipartStream;
import io.cosched.spring.web.RunAsCoroutine;
import io.cosched.spring.web.StreamingResponseBody;
import java.io.InputStream;
import java.lang.reflect.Method;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Predicate;
import org.springframework.core.KotlinDetector;
import org.springframework.core.ReactiveAdapterRegistry;
import org.springframework.core.ResolvableType;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.http.HttpEntity;
import org.springframework.web.method.HandlerMethod;

/**
 * Which handler methods run as coroutines: in annotated mode those marked {@link RunAsCoroutine} (on the method
 * or its class), in mode all every one that does not return a reactive type; in both, every one that streams,
 * whose code blocks by design: it takes its body as a stream ({@code InputStream}, {@link MultipartStream}) or
 * answers with one ({@link StreamingResponseBody}, {@link EventStream}, alone or in a {@code ResponseEntity}). A
 * marked method that returns a reactive type runs its body in the coroutine, and Spring subscribes to what it
 * returns as usual. Spring asks on every request, so the answer is cached per handler.
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
        Map<Method, Boolean> byMethod =
                decisions.computeIfAbsent(handler.getBeanType(), t -> new ConcurrentHashMap<>());
        Boolean decision = byMethod.get(handler.getMethod());
        if (decision == null) {
            decision = decide(handler);
            byMethod.put(handler.getMethod(), decision);
        }
        return decision;
    }

    private boolean decide(HandlerMethod handler) {
        Method method = handler.getMethod();
        if (KotlinDetector.isSuspendingFunction(method)) {
            return false; // Kotlin's own coroutines: they suspend instead of blocking
        }
        if (streams(handler)) {
            return true;
        }
        if (AnnotatedElementUtils.hasAnnotation(method, RunAsCoroutine.class)
                || AnnotatedElementUtils.hasAnnotation(handler.getBeanType(), RunAsCoroutine.class)) {
            return true; // asked for by name, reactive or not: the body runs in the coroutine
        }
        return !annotatedOnly && reactiveTypes.getAdapter(method.getReturnType()) == null;
    }

    private static boolean streams(HandlerMethod handler) {
        for (Class<?> parameter : handler.getMethod().getParameterTypes()) {
            if (parameter == InputStream.class || parameter == MultipartStream.class) {
                return true;
            }
        }
        ResolvableType type = ResolvableType.forMethodReturnType(handler.getMethod());
        if (HttpEntity.class.isAssignableFrom(type.toClass())) {
            type = type.getGeneric();
        }
        Class<?> body = type.toClass();
        return StreamingResponseBody.class.isAssignableFrom(body) || EventStream.class.isAssignableFrom(body);
    }
}
