package io.cosched.spring.boot.actuate;

import io.cosched.spring.web.shedding.SheddingReadiness;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;

/**
 * The {@code coschedShedding} health contributor, for the readiness group: {@code OUT_OF_SERVICE}
 * (HTTP 503 on the probe) while the instance sheds beyond {@code cosched.web.readiness.refuse-at},
 * until it has been calm for {@code cosched.web.readiness.hold} (shedding little, with a free slot); else
 * {@code UP}. Details: the share of coroutine requests shed over the last window, the counts behind it, and the
 * requests in flight against the limit at its end.
 */
public class CoschedSheddingHealthIndicator implements HealthIndicator {

    private final SheddingReadiness readiness;

    public CoschedSheddingHealthIndicator(SheddingReadiness readiness) {
        this.readiness = readiness;
    }

    @Override
    public Health health() {
        SheddingReadiness.Verdict v = readiness.look();
        Health.Builder b = v.refusing() ? Health.outOfService() : Health.up();
        return b.withDetail("shedShare", Math.round(v.shedShare() * 1000) / 1000.0)
                .withDetail("shed", v.shed())
                .withDetail("started", v.started())
                .withDetail("inFlight", v.inFlight())
                .withDetail("limit", v.limit())
                .build();
    }
}
