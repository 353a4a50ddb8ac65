package io.cosched.spring.boot.actuate;

import io.cosched.Scheduler;
import io.cosched.SchedulerStats;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;

/**
 * The {@code cosched} health contributor: {@code UP} with each scheduler's key numbers as details;
 * {@code DOWN} when a scheduler is not running (stopping, stopped, or {@code FAILED}: a carrier
 * thread died); {@link #DEGRADED} while a carrier is stalled.
 *
 * <p>Spring Boot's default status order does not know {@code DEGRADED}, so the overall health
 * ignores it and stays {@code UP} (HTTP 200) during a stall. To let a stall count, list it:
 * {@code management.endpoint.health.status.order=down,out-of-service,degraded,up,unknown}, and to
 * take the instance out of a load balancer meanwhile, map it:
 * {@code management.endpoint.health.status.http-mapping.degraded=503}.
 */
public class CoschedHealthIndicator implements HealthIndicator {

    /** A carrier is stuck in one task; the scheduler still runs and its other carriers serve. */
    public static final Status DEGRADED = new Status("DEGRADED", "a carrier is stalled");

    private final Supplier<List<Scheduler>> schedulers;

    public CoschedHealthIndicator(Supplier<List<Scheduler>> schedulers) {
        this.schedulers = schedulers;
    }

    @Override
    public Health health() {
        boolean down = false;
        boolean stalled = false;
        Map<String, Object> details = new LinkedHashMap<>();
        for (Scheduler s : schedulers.get()) {
            SchedulerStats t = s.stats();
            down |= t.state() != SchedulerStats.State.RUNNING;
            stalled |= t.stalledThreads() > 0;
            Map<String, Object> d = new LinkedHashMap<>();
            d.put("state", t.state());
            d.put("mode", CoschedEndpoint.lowerCase(t.mode()));
            d.put("threads", t.threads());
            d.put("idleThreads", t.idleThreads());
            d.put("stalledThreads", t.stalledThreads());
            d.put("queueDepth", t.queueDepth());
            d.put("coroutines", t.coroutines());
            d.put("stalls", t.stalls());
            details.put(s.name(), d);
        }
        Status status = down ? Status.DOWN : stalled ? DEGRADED : Status.UP;
        return Health.status(status).withDetails(details).build();
    }
}
