package io.cosched.spring.boot.actuate;

import io.cosched.Scheduler;
import io.cosched.SchedulerStats;
import io.cosched.spring.web.CoschedWebStats;
import io.cosched.spring.web.netty.ServerConnections;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.util.List;
import java.util.function.ToDoubleFunction;
import org.jspecify.annotations.Nullable;

/**
 * Micrometer meters for every scheduler (tagged {@code scheduler=<name>}) and for coroutine
 * handlers: what {@code /actuator/cosched} shows, for dashboards and alerts.
 */
public class CoschedMeterBinder implements MeterBinder {

    private static final String WAKEUPS =
            "Resumes of parked coroutines asked for by their own carrier's thread (local), "
                    + "another thread (remote), or the JDK handing back a monitor they blocked on (monitor)";

    private final List<Scheduler> schedulers;
    private final @Nullable CoschedWebStats web;
    private final @Nullable ServerConnections server;

    public CoschedMeterBinder(List<Scheduler> schedulers, @Nullable CoschedWebStats web) {
        this(schedulers, web, null);
    }

    public CoschedMeterBinder(
            List<Scheduler> schedulers, @Nullable CoschedWebStats web, @Nullable ServerConnections server) {
        this.schedulers = schedulers;
        this.web = web;
        this.server = server;
    }

    @Override
    public void bindTo(MeterRegistry registry) {
        for (Scheduler s : schedulers) {
            Tags tags = Tags.of("scheduler", s.name());
            gauge(
                    registry,
                    "cosched.scheduler.queue.depth",
                    "Coroutine steps and tasks waiting for a carrier",
                    s,
                    tags,
                    t -> t.queueDepth());
            gauge(
                    registry,
                    "cosched.scheduler.threads.active",
                    "Carriers running a coroutine step or timer task",
                    s,
                    tags,
                    t -> t.activeThreads());
            gauge(
                    registry,
                    "cosched.scheduler.threads.idle",
                    "Carriers with nothing to run",
                    s,
                    tags,
                    t -> t.idleThreads());
            gauge(
                    registry,
                    "cosched.scheduler.threads.stalled",
                    "Carriers stuck in one task past the stall threshold",
                    s,
                    tags,
                    t -> t.stalledThreads());
            gauge(
                    registry,
                    "cosched.coroutines",
                    "Live coroutines by state",
                    s,
                    tags.and("state", "ready"),
                    t -> t.ready());
            gauge(
                    registry,
                    "cosched.coroutines",
                    "Live coroutines by state",
                    s,
                    tags.and("state", "running"),
                    t -> t.running());
            gauge(
                    registry,
                    "cosched.coroutines",
                    "Live coroutines by state",
                    s,
                    tags.and("state", "waiting"),
                    t -> t.waiting());
            gauge(
                    registry,
                    "cosched.coroutines",
                    "Live coroutines by state",
                    s,
                    tags.and("state", "sleeping"),
                    t -> t.sleeping());
            gauge(registry, "cosched.timers.pending", "Timers that will still fire", s, tags, t -> t.timersPending());
            FunctionCounter.builder("cosched.tasks.completed", s, x -> x.stats().completedTasks())
                    .description("Coroutines finished since start")
                    .tags(tags)
                    .register(registry);
            FunctionCounter.builder("cosched.wakeups", s, x -> x.stats().localWakeups())
                    .description(WAKEUPS)
                    .tags(tags.and("origin", "local"))
                    .register(registry);
            FunctionCounter.builder("cosched.wakeups", s, x -> x.stats().remoteWakeups())
                    .description(WAKEUPS)
                    .tags(tags.and("origin", "remote"))
                    .register(registry);
            FunctionCounter.builder("cosched.wakeups", s, x -> x.stats().monitorWakeups())
                    .description(WAKEUPS)
                    .tags(tags.and("origin", "monitor"))
                    .register(registry);
            FunctionCounter.builder("cosched.stalls", s, x -> x.stats().stalls())
                    .description("Stalls detected: a carrier stuck in one task past the stall threshold")
                    .tags(tags)
                    .register(registry);
            FunctionCounter.builder("cosched.stalls.warmup", s, x -> x.stats().warmUpStalls())
                    .description(
                            "Stalls while the JVM warmed up (the warm-up period after start, or loading classes), not in cosched.stalls")
                    .tags(tags)
                    .register(registry);
            FunctionCounter.builder("cosched.starvations", s, x -> x.stats().starvations())
                    .description(
                            "Times a carrier sat a stall threshold in one task mostly waiting for a CPU (not stalls)")
                    .tags(tags)
                    .register(registry);
            FunctionCounter.builder("cosched.forks", s, x -> x.stats().forks())
                    .description("Subtasks forked by task scopes of this scheduler's coroutines")
                    .tags(tags)
                    .register(registry);
            FunctionCounter.builder("cosched.forks.ended", s, x -> x.stats().forksFailed())
                    .description("Subtasks that ended failed (threw) or cancelled (their scope stopped them)")
                    .tags(tags.and("outcome", "failed"))
                    .register(registry);
            FunctionCounter.builder("cosched.forks.ended", s, x -> x.stats().forksCancelled())
                    .description("Subtasks that ended failed (threw) or cancelled (their scope stopped them)")
                    .tags(tags.and("outcome", "cancelled"))
                    .register(registry);
        }
        ServerConnections c = server;
        if (c != null) {
            FunctionCounter.builder("cosched.server.connections.accepted", c, ServerConnections::accepted)
                    .description("Connections the web server accepted")
                    .register(registry);
            Gauge.builder("cosched.server.connections.open", c, ServerConnections::open)
                    .strongReference(true)
                    .description("Connections of the web server open now")
                    .register(registry);
            Gauge.builder("cosched.server.listen.queue", c, x -> known(x.listenQueue()))
                    .strongReference(true)
                    .description(
                            "Connections the kernel completed that wait in the web server's listen queue to be accepted")
                    .register(registry);
            if (c.listenOverflows() != ServerConnections.UNKNOWN) {
                FunctionCounter.builder("cosched.server.listen.overflows", c, ServerConnections::listenOverflows)
                        .description(
                                "Connections the host refused because a listen queue was full (all sockets, since boot)")
                        .register(registry);
            }
        }
        CoschedWebStats w = web;
        if (w != null) {
            Gauge.builder("cosched.web.in.flight", w, CoschedWebStats::inFlight)
                    .strongReference(true)
                    .description("Requests being handled by coroutines")
                    .register(registry);
            FunctionCounter.builder("cosched.web.timeouts", w, CoschedWebStats::timedOut)
                    .description("Coroutine requests answered 503 after cosched.web.request-timeout")
                    .register(registry);
            Gauge.builder("cosched.web.admission.limit", w, CoschedWebStats::limit)
                    .strongReference(true)
                    .description("How many coroutine requests may be in flight now (fixed, or the adaptive limit now)")
                    .register(registry);
            Gauge.builder("cosched.web.admission.queued", w, CoschedWebStats::queued)
                    .strongReference(true)
                    .description("Coroutine requests over the limit waiting for a slot")
                    .register(registry);
            FunctionCounter.builder("cosched.web.shed", w, CoschedWebStats::shed)
                    .description("Coroutine requests shed at the in-flight limit (503, or 429, with Retry-After)")
                    .register(registry);
            FunctionCounter.builder("cosched.web.admission.queue.timeouts", w, CoschedWebStats::queueTimedOut)
                    .description(
                            "Of the shed coroutine requests, those that waited out cosched.web.admission.queue-timeout")
                    .register(registry);
            FunctionCounter.builder("cosched.web.shed.early", w, CoschedWebStats::shedEarly)
                    .description(
                            "Of the shed coroutine requests, those answered before WebFlux (cosched.web.shed-before-webflux)")
                    .register(registry);
            FunctionCounter.builder("cosched.web.cancelled", w, CoschedWebStats::cancelled)
                    .description("Coroutine requests cancelled before their handler finished (client gone)")
                    .register(registry);
            FunctionCounter.builder("cosched.web.off.loop", w, CoschedWebStats::offLoop)
                    .description(
                            "Coroutine requests that reached cosched off their connection's loop and were sent back to it")
                    .register(registry);
        }
    }

    private static double known(long value) {
        return value == ServerConnections.UNKNOWN ? Double.NaN : value;
    }

    private static void gauge(
            MeterRegistry registry,
            String name,
            String description,
            Scheduler s,
            Tags tags,
            ToDoubleFunction<SchedulerStats> value) {
        Gauge.builder(name, s, x -> value.applyAsDouble(x.stats()))
                .strongReference(true)
                .description(description)
                .tags(tags)
                .register(registry);
    }
}
