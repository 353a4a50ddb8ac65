package io.cosched.spring.boot.autoconfigure.web;

import org.springframework.boot.autoconfigure.condition.ConditionOutcome;
import org.springframework.boot.autoconfigure.condition.SpringBootCondition;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.core.type.AnnotatedTypeMetadata;

/** Matches unless {@code cosched.web.mode=off}. */
final class OnCoroutineHandlersCondition extends SpringBootCondition {

    @Override
    public ConditionOutcome getMatchOutcome(ConditionContext context, AnnotatedTypeMetadata metadata) {
        CoschedWebProperties.Mode mode = Binder.get(context.getEnvironment())
                .bind("cosched.web.mode", CoschedWebProperties.Mode.class)
                .orElse(CoschedWebProperties.Mode.ANNOTATED);
        return mode == CoschedWebProperties.Mode.OFF
                ? ConditionOutcome.noMatch("cosched.web.mode is off")
                : ConditionOutcome.match("cosched.web.mode is " + mode.name().toLowerCase(java.util.Locale.ROOT));
    }
}
