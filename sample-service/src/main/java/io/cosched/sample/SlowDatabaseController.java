package io.cosched.sample;

import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.http.HttpStatus;
import org.springframework.web.bind.annotation.PutMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.server.ResponseStatusException;
import reactor.core.publisher.Mono;

/**
 * {@code PUT /api/admin/slow-database?ms=N} (admin only, by {@link SecurityConfig}'s path rule: a reactive handler
 * runs on the loop, where method security has no security context) turns the {@link SlowDatabase} switch, only where
 * {@code sample.slow-database-switch=true} (the benchmarks). Reactive, so never shed: an overloaded instance can
 * always be told that the database is fast again.
 */
@RestController
@ConditionalOnBooleanProperty("sample.slow-database-switch")
class SlowDatabaseController {

    private final SlowDatabase slow;

    SlowDatabaseController(SlowDatabase slow) {
        this.slow = slow;
    }

    @PutMapping("/api/admin/slow-database")
    Mono<String> set(@RequestParam long ms) {
        try {
            slow.set(ms);
        } catch (IllegalArgumentException e) {
            return Mono.error(new ResponseStatusException(HttpStatus.BAD_REQUEST, e.getMessage()));
        }
        return Mono.just("slow-database: " + ms + " ms");
    }
}
