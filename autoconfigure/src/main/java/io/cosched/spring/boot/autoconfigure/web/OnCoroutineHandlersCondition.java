package io.cosched.spring.boot.autoconfigure.web;

import io.cosched.spring.boot.autoconfigure.CoschedProperties.WebMode;
import org.springframework.boot.autoconfigure.condition.ConditionOutcome;
import org.springframework.boot.autoconfigure.condition.SpringBootCondition;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.core.type.AnnotatedTypeMetadata;

/** Matches unless {@code cosched.web.mode=off}. */
final class OnCoroutineHandlersCondition extends SpringBootCondition {

    @Override
    public ConditionOutcome getMatchOutcome(ConditionContext context, AnnotatedTypeMetadata metadata) {
        WebMode mode = Binder.get(context.getEnvironment()).bind("cosched.web.mode", WebMode.class).orElse(WebMode.ANNOTATED);
        return mode == WebMode.OFF
                ? ConditionOutcome.noMatch("cosched.web.mode is off")
                : ConditionOutcome.match("cosched.web.mode is " + mode.name().toLowerCase(java.util.Locale.ROOT));
    }
}
