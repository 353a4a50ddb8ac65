package io.cosched.spring.web.session;

import io.cosched.Internal;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Iterator;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReference;
import org.jspecify.annotations.Nullable;
import org.springframework.web.server.WebSession;
import org.springframework.web.server.session.WebSessionStore;
import reactor.core.publisher.Mono;

/**
 * An in-memory {@link WebSessionStore} that creates a session on the thread that asks for it.
 *
 * <p>Spring's {@code InMemoryWebSessionStore} makes every new session on Reactor's
 * {@code boundedElastic} scheduler and hands it on from {@code parallel} (its id generator might block
 * for entropy). Spring Security asks for the session on every request that carries no session
 * cookie (its request cache and its security context repository look there), so behind Spring
 * Security each such request left its event loop twice before it reached a handler, and a coroutine
 * handler then had to be sent back. Here ids come from one DRBG {@link SecureRandom}, seeded once when
 * the store is made and never blocking after that, so a session is made where it is asked for. A session's id
 * is drawn when it is first asked for: most of the sessions Spring Security asks for are never started and are
 * dropped at the end of the request without anyone reading their id.
 *
 * <p>Otherwise it behaves as Spring's store: a session is kept only once it is started (explicitly,
 * or by an attribute), expires after its max idle time since the last access, expired sessions are
 * swept at most once a minute on access, and saving a new session beyond {@code maxSessions} fails.
 */
@Internal
public final class InlineWebSessionStore implements WebSessionStore {

    private static final long SWEEP_PERIOD_MILLIS = 60_000;

    private final int maxSessions;
    private final Duration defaultMaxIdleTime;
    private final Clock clock;
    private final SecureRandom ids;
    private final Map<String, Session> sessions = new ConcurrentHashMap<>();
    private volatile Instant nextSweep;

    /**
     * @param maxSessions        how many started sessions it keeps at most ({@code > 0})
     * @param defaultMaxIdleTime how long a session lives without being accessed (negative: for ever)
     * @param clock              the time
     */
    public InlineWebSessionStore(int maxSessions, Duration defaultMaxIdleTime, Clock clock) {
        this(maxSessions, defaultMaxIdleTime, clock, drbg());
    }

    InlineWebSessionStore(int maxSessions, Duration defaultMaxIdleTime, Clock clock, SecureRandom ids) {
        if (maxSessions <= 0) {
            throw new IllegalArgumentException("maxSessions: " + maxSessions + " (expected: > 0)");
        }
        this.maxSessions = maxSessions;
        this.defaultMaxIdleTime = defaultMaxIdleTime;
        this.clock = clock;
        this.ids = ids;
        ids.nextBytes(new byte[16]); // seeds it now, at start-up, not on a loop at the first request
        this.nextSweep = clock.instant().plusMillis(SWEEP_PERIOD_MILLIS);
    }

    private static SecureRandom drbg() {
        try {
            return SecureRandom.getInstance("DRBG");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("no DRBG SecureRandom in this JDK", e);
        }
    }

    @Override
    public Mono<WebSession> createWebSession() {
        Instant now = clock.instant();
        sweepIfDue(now);
        return Mono.just(new Session(now, defaultMaxIdleTime));
    }

    @Override
    public Mono<WebSession> retrieveSession(String id) {
        Instant now = clock.instant();
        sweepIfDue(now);
        Session s = sessions.get(id);
        if (s == null) {
            return Mono.empty();
        }
        if (s.isExpired(now)) {
            sessions.remove(id, s);
            return Mono.empty();
        }
        s.lastAccessTime = now;
        return Mono.just(s);
    }

    @Override
    public Mono<Void> removeSession(String id) {
        sessions.remove(id);
        return Mono.empty();
    }

    @Override
    public Mono<WebSession> updateLastAccessTime(WebSession session) {
        if (!(session instanceof Session s)) {
            return Mono.error(new IllegalArgumentException("session: " + session + " (expected: one of this store's)"));
        }
        s.lastAccessTime = clock.instant();
        return Mono.just(s);
    }

    /** Sessions kept now (started and saved, not yet swept). */
    public int size() {
        return sessions.size();
    }

    /** Drops every expired session now. */
    public void removeExpiredSessions() {
        sweep(clock.instant());
    }

    private String newId() {
        byte[] b = new byte[16];
        ids.nextBytes(b);
        b[6] = (byte) (b[6] & 0x0f | 0x40); // a version 4 (random) UUID, as Spring's ids are
        b[8] = (byte) (b[8] & 0x3f | 0x80);
        long msb = 0;
        long lsb = 0;
        for (int i = 0; i < 8; i++) {
            msb = msb << 8 | (b[i] & 0xff);
            lsb = lsb << 8 | (b[i + 8] & 0xff);
        }
        return new UUID(msb, lsb).toString();
    }

    private void sweepIfDue(Instant now) {
        if (now.isAfter(nextSweep)) {
            sweep(now);
        }
    }

    private void sweep(Instant now) {
        nextSweep = now.plusMillis(SWEEP_PERIOD_MILLIS);
        for (Iterator<Session> it = sessions.values().iterator(); it.hasNext(); ) {
            Session s = it.next();
            if (s.isExpired(now)) {
                it.remove();
                s.expire();
            }
        }
    }

    private enum State {
        NEW,
        STARTED,
        EXPIRED
    }

    private final class Session implements WebSession {

        // drawn when first asked for: Spring Security asks for a session on most requests and drops it unused
        private final AtomicReference<@Nullable String> id = new AtomicReference<>();
        private final Map<String, Object> attributes = new ConcurrentHashMap<>();
        private final Instant creationTime;
        private final AtomicReference<State> state = new AtomicReference<>(State.NEW);
        private volatile Instant lastAccessTime;
        private volatile Duration maxIdleTime;

        Session(Instant creationTime, Duration maxIdleTime) {
            this.creationTime = creationTime;
            this.lastAccessTime = creationTime;
            this.maxIdleTime = maxIdleTime;
        }

        @Override
        public String getId() {
            String current = id.get();
            if (current == null) {
                String drawn = newId();
                current = id.compareAndExchange(null, drawn);
                if (current == null) {
                    current = drawn;
                }
            }
            return current;
        }

        @Override
        public Map<String, Object> getAttributes() {
            return attributes;
        }

        @Override
        public void start() {
            state.compareAndSet(State.NEW, State.STARTED);
        }

        @Override
        public boolean isStarted() {
            return state.get() == State.STARTED || !attributes.isEmpty();
        }

        @Override
        public Mono<Void> changeSessionId() {
            String next = newId();
            synchronized (this) {
                String old = id.getAndSet(next);
                if (old != null && sessions.remove(old, this)) {
                    sessions.put(next, this);
                }
            }
            return Mono.empty();
        }

        @Override
        public Mono<Void> invalidate() {
            expire();
            String current = id.get();
            if (current != null) {
                sessions.remove(current, this);
            }
            return Mono.empty();
        }

        void expire() {
            state.set(State.EXPIRED);
            attributes.clear();
        }

        @Override
        public Mono<Void> save() {
            if (!attributes.isEmpty()) {
                state.compareAndSet(State.NEW, State.STARTED); // started by an attribute
            }
            if (!isStarted()) {
                return Mono.empty();
            }
            synchronized (this) {
                String key = getId();
                if (!sessions.containsKey(key)) {
                    if (sessions.size() >= maxSessions) {
                        sweep(clock.instant());
                        if (sessions.size() >= maxSessions) {
                            return Mono.error(
                                    new IllegalStateException("Max sessions limit reached: " + sessions.size()));
                        }
                    }
                    sessions.putIfAbsent(key, this);
                }
                if (state.get() == State.EXPIRED) { // invalidated meanwhile
                    sessions.remove(key, this);
                    return Mono.error(new IllegalStateException("Session was invalidated"));
                }
            }
            return Mono.empty();
        }

        @Override
        public boolean isExpired() {
            return isExpired(clock.instant());
        }

        boolean isExpired(Instant now) {
            if (state.get() == State.EXPIRED) {
                return true;
            }
            Duration idle = maxIdleTime;
            if (isStarted() && !idle.isNegative() && now.minus(idle).isAfter(lastAccessTime)) {
                state.set(State.EXPIRED);
                return true;
            }
            return false;
        }

        @Override
        public Instant getCreationTime() {
            return creationTime;
        }

        @Override
        public Instant getLastAccessTime() {
            return lastAccessTime;
        }

        @Override
        public void setMaxIdleTime(Duration maxIdleTime) {
            this.maxIdleTime = maxIdleTime;
        }

        @Override
        public Duration getMaxIdleTime() {
            return maxIdleTime;
        }

        @Override
        public String toString() {
            String current = id.get(); // a log line draws no id
            return "InlineWebSession[" + (current == null ? "no id yet" : current) + ", " + state.get() + "]";
        }
    }
}
