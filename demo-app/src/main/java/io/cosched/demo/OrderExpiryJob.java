package io.cosched.demo;

import io.cosched.IOManager;
import io.cosched.Timer;
import java.time.Clock;
import java.time.Duration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.context.event.ApplicationReadyEvent;
import org.springframework.context.event.ContextClosedEvent;
import org.springframework.context.event.EventListener;
import org.springframework.stereotype.Component;

/**
 * A background job on the IOManager's {@link io.cosched.TimerManager}: a recurring timer that,
 * every {@code demo.expiry.period}, starts a coroutine which expires pending orders older than
 * {@code demo.expiry.max-age}. The timer task itself only spawns: it runs on the event loop, and the
 * JDBC call belongs in a coroutine, where blocking parks instead of stalling the loop.
 */
@Component
public class OrderExpiryJob {

    private static final Logger LOG = LoggerFactory.getLogger(OrderExpiryJob.class);

    private final IOManager io;
    private final OrderRepository orders;
    private final Clock clock;
    private final Duration period;
    private final Duration maxAge;
    private volatile Timer timer;

    public OrderExpiryJob(IOManager io, OrderRepository orders, Clock clock, DemoProperties properties) {
        this.io = io;
        this.orders = orders;
        this.clock = clock;
        this.period = properties.getExpiry().getPeriod();
        this.maxAge = properties.getExpiry().getMaxAge();
    }

    @EventListener(ApplicationReadyEvent.class)
    public void arm() {
        timer = io.timers().addRecurringTimer(period, () -> io.spawn(this::expireNow));
        LOG.info(
                "order expiry armed: every {} on the IOManager's timers, expiring pending orders older than {}",
                period,
                maxAge);
    }

    @EventListener(ContextClosedEvent.class)
    public void disarm() {
        Timer t = timer;
        if (t != null) {
            t.cancel();
        }
    }

    /** One run: expires stale pending orders and says how many. */
    public int expireNow() {
        int expired = orders.expirePendingBefore(clock.instant().minus(maxAge));
        if (expired > 0) {
            LOG.info("expired {} pending order(s) older than {}", expired, maxAge);
        }
        return expired;
    }
}
