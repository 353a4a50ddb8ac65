package io.cosched.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/**
 * The hint added to "blocking I/O called on event loop thread ... outside any coroutine": code of a class whose
 * handlers are marked to run as coroutines, called outside one, is named with what most likely happened.
 */
class CallerHintTest {

    @Retention(RetentionPolicy.RUNTIME)
    @interface Marked {}

    private static final CallerHint HINT = new CallerHint(Marked.class.getName());

    /** A controller whose marked method returns a publisher-like supplier, which runs after the method has. */
    static final class Controller {
        @Marked
        Supplier<String> events() {
            return () -> HINT.describe(); // what a Flux.defer(() -> blocking call) does, later, on the loop
        }
    }

    @Test
    void codeOfAMarkedClassRunOutsideItsMethodIsTracedToTheReturnedPublisher() {
        String hint = new Controller().events().get();
        assertThat(hint)
                .contains("The caller, Controller.")
                .contains("code of a @RunAsCoroutine handler class")
                .contains("inside a Mono or Flux the handler returned")
                .contains("return an EventStream");
    }

    @Test
    void unmarkedCallersGetNoHint() {
        assertThat(HINT.describe()).isEmpty();
    }
}
