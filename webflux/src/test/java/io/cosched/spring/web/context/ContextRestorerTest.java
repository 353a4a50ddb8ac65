package io.cosched.spring.web.context;

import static org.assertj.core.api.Assertions.assertThat;

import io.cosched.Coroutine;
import io.cosched.IOManager;
import io.micrometer.context.ContextRegistry;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.security.authentication.TestingAuthenticationToken;
import org.springframework.security.core.Authentication;
import org.springframework.security.core.context.ReactiveSecurityContextHolder;
import org.springframework.security.core.context.SecurityContext;
import org.springframework.security.core.context.SecurityContextHolder;
import org.springframework.security.core.context.SecurityContextImpl;
import reactor.core.publisher.Mono;
import reactor.util.context.Context;
import reactor.util.context.ReactorContextAccessor;

/**
 * The request's Spring Security context reaches blocking code in the coroutine through SecurityContextHolder,
 * and the values of Micrometer's thread-local accessors are set while the task runs.
 */
@Timeout(30)
class ContextRestorerTest {

    private final ContextRestorer restorer = ContextRestorer.detect();
    private final IOManager io =
            IOManager.builder().name("restorer-io").threads(1).build();

    @org.junit.jupiter.api.BeforeEach
    void start() {
        io.start();
    }

    @AfterEach
    void stop() {
        io.close();
    }

    @Test
    void theSecurityContextOfTheReactorContextIsSecurityContextHoldersWhileTheTaskRunsAndClearedAfter()
            throws Exception {
        Authentication alice = new TestingAuthenticationToken("alice", "pw", "ROLE_USER");
        Context context = ReactiveSecurityContextHolder.withAuthentication(alice);
        AtomicReference<Authentication> seen = new AtomicReference<>();
        AtomicReference<SecurityContext> after = new AtomicReference<>();
        Coroutine<Void> c = io.spawn(() -> {
            restorer.wrap(
                            context,
                            () -> seen.set(SecurityContextHolder.getContext().getAuthentication()))
                    .run();
            after.set(SecurityContextHolder.getContext());
        });
        c.toFuture().get(10, TimeUnit.SECONDS);
        assertThat(seen.get()).isSameAs(alice);
        assertThat(after.get().getAuthentication()).as("cleared after the task").isNull();
    }

    @Test
    void aSecurityContextThatIsStillLoadingIsAwaitedInTheCoroutine() throws Exception {
        Authentication bob = new TestingAuthenticationToken("bob", "pw");
        Mono<SecurityContext> slow = Mono.delay(Duration.ofMillis(50)).map(x -> new SecurityContextImpl(bob));
        Context context = ReactiveSecurityContextHolder.withSecurityContext(slow);
        AtomicReference<Authentication> seen = new AtomicReference<>();
        io.spawn(() -> restorer.wrap(
                                context,
                                () -> seen.set(
                                        SecurityContextHolder.getContext().getAuthentication()))
                        .run())
                .toFuture()
                .get(10, TimeUnit.SECONDS);
        assertThat(seen.get()).isSameAs(bob);
    }

    @Test
    void withoutASecurityContextTheTaskRunsUnchanged() {
        Runnable task = () -> {};
        assertThat(ContextRestorer.detect()).isNotNull();
        assertThat(new ContextRestorer.SpringSecurity().wrap(Context.empty(), task))
                .isSameAs(task);
    }

    @Test
    void anEmptySecurityContextMonoLeavesTheHolderEmpty() throws Exception {
        Context context = ReactiveSecurityContextHolder.withSecurityContext(Mono.empty());
        AtomicReference<Authentication> seen = new AtomicReference<>(new TestingAuthenticationToken("x", "y"));
        io.spawn(() -> restorer.wrap(
                                context,
                                () -> seen.set(
                                        SecurityContextHolder.getContext().getAuthentication()))
                        .run())
                .toFuture()
                .get(10, TimeUnit.SECONDS);
        assertThat(seen.get()).isNull();
    }

    @Test
    void aContextWithoutAnAccessorsKeyRunsTheTaskItselfWithoutASnapshot() {
        ThreadLocal<String> local = new ThreadLocal<>();
        ContextRegistry registry = new ContextRegistry();
        registry.registerContextAccessor(new ReactorContextAccessor());
        registry.registerThreadLocalAccessor("cosched.test.key", local);
        ContextRestorer.Micrometer micrometer = new ContextRestorer.Micrometer(registry);
        Runnable task = () -> {};
        assertThat(micrometer.wrap(Context.empty(), task)).isSameAs(task);
        assertThat(micrometer.wrap(Context.of("another.key", "x"), task)).isSameAs(task);
        assertThat(micrometer.wrap(Context.of("cosched.test.key", "x"), task)).isNotSameAs(task);
    }

    @Test
    void anAccessorsValueIsSetWhileTheTaskRunsAndTheOldOneIsBackAfterEvenForAnAccessorRegisteredLater() {
        ThreadLocal<String> early = new ThreadLocal<>();
        ThreadLocal<String> late = new ThreadLocal<>();
        ContextRegistry registry = new ContextRegistry();
        registry.registerContextAccessor(new ReactorContextAccessor());
        registry.registerThreadLocalAccessor("cosched.test.early", early);
        ContextRestorer.Micrometer micrometer = new ContextRestorer.Micrometer(registry);
        registry.registerThreadLocalAccessor("cosched.test.late", late); // after the restorer was made
        AtomicReference<String> seenEarly = new AtomicReference<>();
        AtomicReference<String> seenLate = new AtomicReference<>();
        early.set("before");
        try {
            micrometer
                    .wrap(Context.of("cosched.test.early", "request", "cosched.test.late", "late-request"), () -> {
                        seenEarly.set(early.get());
                        seenLate.set(late.get());
                    })
                    .run();
            assertThat(seenEarly.get()).isEqualTo("request");
            assertThat(seenLate.get()).isEqualTo("late-request");
            assertThat(early.get()).as("restored after the task").isEqualTo("before");
            assertThat(late.get()).as("restored after the task").isNull();

            micrometer
                    .wrap(Context.of("cosched.test.late", "only-late"), () -> seenLate.set(late.get()))
                    .run();
            assertThat(seenLate.get())
                    .as("the late accessor's key alone is enough")
                    .isEqualTo("only-late");
        } finally {
            early.remove();
            late.remove();
        }
    }
}
