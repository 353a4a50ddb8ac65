package io.cosched.spring.boot.autoconfigure.web;

import org.springframework.boot.autoconfigure.condition.ConditionOutcome;
import org.springframework.boot.autoconfigure.condition.SpringBootCondition;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.core.env.Environment;
import org.springframework.core.type.AnnotatedTypeMetadata;

/** Matches when coroutine requests have an in-flight limit: {@code cosched.web.max-in-flight}, or an adaptive one. */
final class OnInFlightLimitCondition extends SpringBootCondition {

    @Override
    public ConditionOutcome getMatchOutcome(ConditionContext context, AnnotatedTypeMetadata metadata) {
        Environment environment = context.getEnvironment();
        if (environment.containsProperty("cosched.web.max-in-flight")) {
            return ConditionOutcome.match("cosched.web.max-in-flight is set");
        }
        CoschedWebProperties.AdmissionLimit limit = Binder.get(environment)
                .bind("cosched.web.admission.limit", CoschedWebProperties.AdmissionLimit.class)
                .orElse(CoschedWebProperties.AdmissionLimit.FIXED);
        return limit == CoschedWebProperties.AdmissionLimit.ADAPTIVE
                ? ConditionOutcome.match("cosched.web.admission.limit is adaptive")
                : ConditionOutcome.noMatch("no in-flight limit: cosched.web.max-in-flight unset and the limit fixed");
    }
}
