package io.cosched.internal;

import java.lang.annotation.Annotation;
import java.lang.reflect.Method;
import org.jspecify.annotations.Nullable;

/**
 * What to add to the error of blocking I/O called on a loop thread outside any coroutine when the caller is code
 * of a handler class marked as a coroutine one (the web module's {@code @RunAsCoroutine}, known here by name: the
 * runtime depends on no web framework). Such code ran on the loop although its author meant it to run in a
 * coroutine: most often it is inside a publisher the handler returned, which the web framework subscribes to on
 * the loop, after the handler's coroutine has ended. Walked only on that error's path.
 */
final class CallerHint {

    static final String RUN_AS_COROUTINE = "io.cosched.spring.web.RunAsCoroutine";

    private final String annotation;

    CallerHint(String annotation) {
        this.annotation = annotation;
    }

    /** The sentence to add, or "" when no frame of the calling thread belongs to a marked class. */
    String describe() {
        java.util.List<StackWalker.StackFrame> frames = StackWalker.getInstance(
                        StackWalker.Option.RETAIN_CLASS_REFERENCE)
                .walk(s -> s.toList());
        for (StackWalker.StackFrame f : frames) {
            Method m = method(f);
            if (m != null
                    && isHandler(m)
                    && (marked(m.getAnnotations())
                            || marked(f.getDeclaringClass().getAnnotations()))) {
                // the handler itself is on the loop's stack: nothing ran it as a coroutine
                return " The caller, " + where(f) + ", is a handler marked @RunAsCoroutine that does not run in a"
                        + " coroutine: cosched's handlers are off (cosched.web.mode=off, cosched.enabled=false).";
            }
        }
        for (StackWalker.StackFrame f : frames) {
            Class<?> type = f.getDeclaringClass();
            if (marked(type.getAnnotations()) || hasMarkedMethod(type)) {
                // code of a marked handler class, but no handler frame: the handler's body has returned
                return " The caller, " + where(f) + ", is code of a @RunAsCoroutine handler class that runs on the"
                        + " event loop, outside the handler's coroutine: most likely inside a Mono or Flux the handler"
                        + " returned, which WebFlux subscribes to on the loop after the handler's body has run."
                        + " @RunAsCoroutine runs the method's body only: do the blocking work in the body, or return an"
                        + " EventStream to produce a stream of results in the coroutine.";
            }
        }
        return "";
    }

    private static String where(StackWalker.StackFrame f) {
        return f.getDeclaringClass().getSimpleName() + "." + f.getMethodName();
    }

    private static @Nullable Method method(StackWalker.StackFrame f) {
        try {
            return f.getDeclaringClass()
                    .getDeclaredMethod(f.getMethodName(), f.getMethodType().parameterArray());
        } catch (NoSuchMethodException | SecurityException notFound) {
            return null; // a constructor, a hidden frame
        }
    }

    /** A request-mapping method: annotated with one of Spring's {@code @...Mapping}s, known by name. */
    private static boolean isHandler(Method m) {
        for (Annotation a : m.getAnnotations()) {
            String name = a.annotationType().getName();
            if (name.startsWith("org.springframework.web.bind.annotation.") && name.endsWith("Mapping")) {
                return true;
            }
        }
        return false;
    }

    private boolean hasMarkedMethod(Class<?> type) {
        for (Method m : type.getDeclaredMethods()) {
            if (marked(m.getAnnotations())) {
                return true;
            }
        }
        return false;
    }

    private boolean marked(Annotation[] annotations) {
        for (Annotation a : annotations) {
            if (a.annotationType().getName().equals(annotation)) {
                return true;
            }
        }
        return false;
    }
}
