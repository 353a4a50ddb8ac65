package io.cosched.spring.web.session;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.web.server.WebSession;
import reactor.core.publisher.Mono;

@Timeout(30)
class InlineWebSessionStoreTest {

    private final MutableClock clock = new MutableClock();
    private final InlineWebSessionStore store = new InlineWebSessionStore(3, Duration.ofMinutes(30), clock);

    @Test
    void aNewSessionIsMadeOnTheThreadThatSubscribes() {
        AtomicReference<Thread> madeOn = new AtomicReference<>();
        WebSession s = store.createWebSession()
                .doOnNext(x -> madeOn.set(Thread.currentThread()))
                .block();
        assertThat(madeOn.get()).isSameAs(Thread.currentThread());
        assertThat(s.getId()).matches("[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}");
        assertThat(s.getMaxIdleTime()).isEqualTo(Duration.ofMinutes(30));
    }

    @Test
    void idsDoNotRepeat() {
        Set<String> ids = new HashSet<>();
        for (int i = 0; i < 10_000; i++) {
            ids.add(store.createWebSession().block().getId());
        }
        assertThat(ids).hasSize(10_000);
    }

    @Test
    void anIdIsDrawnOnlyWhenAskedForAndThenKept() throws Exception {
        AtomicInteger draws = new AtomicInteger();
        SecureRandom counting = new SecureRandom() {
            @Override
            public void nextBytes(byte[] bytes) {
                draws.incrementAndGet();
                super.nextBytes(bytes);
            }
        };
        InlineWebSessionStore counted = new InlineWebSessionStore(3, Duration.ofMinutes(30), clock, counting);
        int seeding = draws.get();

        WebSession unread = counted.createWebSession().block();
        unread.save().block(); // not started: dropped, as Spring Security's unused sessions are
        assertThat(draws.get()).isEqualTo(seeding);

        WebSession read = counted.createWebSession().block();
        List<Callable<String>> askers = Collections.nCopies(8, read::getId);
        ExecutorService pool = Executors.newFixedThreadPool(8);
        try {
            Set<String> seen = new HashSet<>();
            for (Future<String> f : pool.invokeAll(askers)) {
                seen.add(f.get());
            }
            assertThat(seen).containsExactly(read.getId());
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void aSessionNobodyStartedIsNotKept() {
        WebSession s = store.createWebSession().block();
        s.save().block();
        assertThat(s.isStarted()).isFalse();
        assertThat(store.size()).isZero();
        assertThat(store.retrieveSession(s.getId()).block()).isNull();
    }

    @Test
    void anAttributeStartsASessionAndSavingKeepsIt() {
        WebSession s = store.createWebSession().block();
        s.getAttributes().put("cart", "3 items");
        s.save().block();
        assertThat(s.isStarted()).isTrue();
        WebSession again = store.retrieveSession(s.getId()).block();
        assertThat(again).isSameAs(s);
        assertThat(again.<String>getAttribute("cart")).isEqualTo("3 items");
    }

    @Test
    void aSessionExpiresAfterItsMaxIdleTimeSinceTheLastAccess() {
        WebSession s = started();
        clock.advance(Duration.ofMinutes(20));
        assertThat(store.retrieveSession(s.getId()).block())
                .as("accessed after 20 min")
                .isSameAs(s);
        clock.advance(Duration.ofMinutes(29));
        assertThat(store.retrieveSession(s.getId()).block())
                .as("29 min after the last access")
                .isSameAs(s);
        clock.advance(Duration.ofMinutes(31));
        assertThat(store.retrieveSession(s.getId()).block())
                .as("31 min after it")
                .isNull();
        assertThat(s.isExpired()).isTrue();
        assertThat(store.size()).isZero();
    }

    @Test
    void expiredSessionsAreSweptWhenTheStoreIsUsedAMinuteLater() {
        WebSession s = started();
        started();
        clock.advance(Duration.ofMinutes(31));
        assertThat(store.size()).isEqualTo(2);
        store.createWebSession().block(); // a new session is asked for: time to sweep
        assertThat(store.size()).isZero();
        assertThat(s.getAttributes()).isEmpty();
    }

    @Test
    void beyondMaxSessionsANewSessionCannotBeSavedButAKeptOneCan() {
        WebSession first = started();
        started();
        started();
        WebSession fourth = store.createWebSession().block();
        fourth.start();
        assertThatThrownBy(() -> fourth.save().block())
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("Max sessions limit reached: 3");
        first.getAttributes().put("more", 1);
        first.save().block(); // already kept: saving again is fine
        clock.advance(Duration.ofMinutes(31));
        WebSession later = store.createWebSession().block();
        later.start();
        later.save().block(); // the expired ones made room
        assertThat(store.retrieveSession(later.getId()).block()).isSameAs(later);
    }

    @Test
    void changeSessionIdMovesTheSessionToANewId() {
        WebSession s = started();
        String old = s.getId();
        s.changeSessionId().block();
        assertThat(s.getId()).isNotEqualTo(old);
        assertThat(store.retrieveSession(old).block()).isNull();
        assertThat(store.retrieveSession(s.getId()).block()).isSameAs(s);
    }

    @Test
    void anInvalidatedSessionIsGoneAndCannotBeSavedAgain() {
        WebSession s = started();
        s.invalidate().block();
        assertThat(store.retrieveSession(s.getId()).block()).isNull();
        assertThat(s.isExpired()).isTrue();
        s.start();
        s.getAttributes().put("late", 1);
        assertThatThrownBy(() -> s.save().block()).hasMessageContaining("invalidated");
    }

    @Test
    void aNegativeMaxIdleTimeNeverExpires() {
        WebSession s = store.createWebSession().block();
        s.setMaxIdleTime(Duration.ofSeconds(-1));
        s.start();
        s.save().block();
        clock.advance(Duration.ofDays(400));
        assertThat(store.retrieveSession(s.getId()).block()).isSameAs(s);
    }

    @Test
    void updateLastAccessTimeTakesOnlyItsOwnSessions() {
        WebSession s = started();
        clock.advance(Duration.ofMinutes(5));
        assertThat(store.updateLastAccessTime(s).block().getLastAccessTime()).isEqualTo(clock.instant());
        WebSession foreign = new org.springframework.web.server.session.InMemoryWebSessionStore()
                .createWebSession()
                .block();
        assertThatIllegalArgumentException()
                .isThrownBy(() -> store.updateLastAccessTime(foreign).block());
    }

    @Test
    void maxSessionsMustBePositive() {
        assertThatIllegalArgumentException()
                .isThrownBy(() -> new InlineWebSessionStore(0, Duration.ofMinutes(1), clock))
                .withMessage("maxSessions: 0 (expected: > 0)");
    }

    private WebSession started() {
        WebSession s = store.createWebSession().block();
        s.start();
        Mono<Void> saved = s.save();
        saved.block();
        return s;
    }

    private static final class MutableClock extends Clock {
        private Instant now = Instant.parse("2026-11-24T00:00:00Z");

        void advance(Duration d) {
            now = now.plus(d);
        }

        @Override
        public Instant instant() {
            return now;
        }

        @Override
        public java.time.ZoneId getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(java.time.ZoneId zone) {
            return this;
        }
    }
}
