package io.cosched.spring.web.shedding;

import io.cosched.spring.web.CoschedWebStats;
import java.time.Duration;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;

/**
 * Whether this instance sheds so much of its coroutine traffic that a load balancer should send it
 * elsewhere: what a readiness probe asks. Looked at when asked (a probe every few seconds), over the
 * time since the previous look (at least {@link #MIN_WINDOW}): the share of coroutine requests shed
 * ({@code shed / (shed + started)}).
 *
 * <p>With hysteresis, so that it does not flap: it starts refusing when a window's share reaches
 * {@code refuseAt}, and accepts again only after windows spanning {@code hold} were all calm: below
 * {@code acceptBelow}, and with a free slot at their end (in flight below the limit). Once out of the
 * load balancer an instance sees little traffic and sheds nothing, but the requests that overloaded it
 * may still hold every slot; back in rotation then, it would shed its share at once and leave again.
 * Thread-safe.
 */
public final class SheddingReadiness {

    /** The shortest window a look measures: looks closer together return the last verdict. */
    public static final Duration MIN_WINDOW = Duration.ofSeconds(1);

    /** A look's outcome. */
    public record Verdict(boolean refusing, double shedShare, long shed, long started, int inFlight, int limit) {}

    private final CoschedWebStats stats;
    private final double refuseAt;
    private final double acceptBelow;
    private final long holdNanos;
    private final LongSupplier nanoClock;

    private long lastAt;
    private long lastShed;
    private long lastStarted;
    private long calmSince;
    private boolean calm;
    private @Nullable Verdict verdict;

    /**
     * @param refuseAt    share of coroutine requests shed in a window that makes it refuse, in (0, 1]
     * @param acceptBelow share under which windows count as calm, in (0, refuseAt]
     * @param hold        how long the calm must last before it accepts again, >= 0
     */
    public SheddingReadiness(CoschedWebStats stats, double refuseAt, double acceptBelow, Duration hold) {
        this(stats, refuseAt, acceptBelow, hold, System::nanoTime);
    }

    /** With the clock given: tests drive time. */
    public SheddingReadiness(
            CoschedWebStats stats, double refuseAt, double acceptBelow, Duration hold, LongSupplier nanoClock) {
        if (!(refuseAt > 0 && refuseAt <= 1)) {
            throw new IllegalArgumentException("refuse-at: " + refuseAt + " (expected: > 0 and <= 1)");
        }
        if (!(acceptBelow > 0 && acceptBelow <= refuseAt)) {
            throw new IllegalArgumentException(
                    "accept-below: " + acceptBelow + " (expected: > 0 and <= its refuse-at, " + refuseAt + ")");
        }
        if (hold.isNegative()) {
            throw new IllegalArgumentException("hold: " + hold + " (expected: >= 0)");
        }
        this.stats = stats;
        this.refuseAt = refuseAt;
        this.acceptBelow = acceptBelow;
        this.holdNanos = hold.toNanos();
        this.nanoClock = nanoClock;
    }

    /** Looks (when the last look is at least {@link #MIN_WINDOW} old) and says whether it refuses traffic. */
    public synchronized Verdict look() {
        long now = nanoClock.getAsLong();
        long shedNow = stats.shed();
        long startedNow = stats.coroutinesStarted();
        Verdict last = verdict;
        if (last == null) { // the first look has no window
            last = new Verdict(false, 0, 0, 0, stats.inFlight(), stats.limit());
            verdict = last;
            remember(now, shedNow, startedNow);
            return last;
        }
        if (now - lastAt < MIN_WINDOW.toNanos()) {
            return last;
        }
        long shed = shedNow - lastShed;
        long started = startedNow - lastStarted;
        double share = shed + started == 0 ? 0 : (double) shed / (shed + started);
        int inFlight = stats.inFlight();
        int limit = stats.limit();
        boolean refusing = last.refusing();
        if (!refusing) {
            refusing = share >= refuseAt;
            calm = false;
        } else if (share < acceptBelow && inFlight < limit) {
            if (!calm) {
                calm = true;
                calmSince = lastAt; // this window was calm from its start
            }
            refusing = now - calmSince < holdNanos;
        } else {
            calm = false;
        }
        last = new Verdict(refusing, share, shed, started, inFlight, limit);
        verdict = last;
        remember(now, shedNow, startedNow);
        return last;
    }

    private void remember(long now, long shed, long started) {
        lastAt = now;
        lastShed = shed;
        lastStarted = started;
    }
}
