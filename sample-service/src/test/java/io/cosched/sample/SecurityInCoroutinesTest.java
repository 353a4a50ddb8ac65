package io.cosched.sample;

import static org.assertj.core.api.Assertions.assertThat;

import io.cosched.Coroutines;
import io.cosched.IOManager;
import io.cosched.spring.web.CoschedWebStats;
import java.net.http.HttpResponse;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.security.core.Authentication;
import org.springframework.security.core.context.SecurityContextHolder;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * Spring Security in coroutine handlers, with the service's own configuration (HTTP basic with bcrypt,
 * JWT bearer tokens, {@code @PreAuthorize} on a blocking {@code @Transactional} service, Spring Data
 * auditing): blocking code sees the request's authentication in {@code SecurityContextHolder}, method
 * security allows and denies as it should, and nothing is left behind on a loop. One event loop, so
 * every request shares it.
 */
@SpringBootTest(
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {"cosched.io.threads=1", "spring.datasource.url=jdbc:h2:mem:security;DB_CLOSE_DELAY=-1"},
        classes = {SampleService.class, SecurityInCoroutinesTest.PasswordCheckThreads.class})
@Timeout(120)
class SecurityInCoroutinesTest {

    private static final Tokens TOKENS = new Tokens();
    private static final String USER = Api.basic("user", "secret");
    private static final String ADMIN = Api.basic("admin", "secret");

    @DynamicPropertySource
    static void jwt(DynamicPropertyRegistry registry) {
        registry.add("sample.jwt.public-key", TOKENS::publicKey);
    }

    @LocalServerPort
    int port;

    @Autowired
    IOManager io;

    @Autowired
    CoschedWebStats stats;

    Api api;

    @BeforeEach
    void client() {
        api = new Api(port);
    }

    @Test
    void blockingCodeInTheHandlerSeesTheAuthenticatedUserInSecurityContextHolder() throws Exception {
        HttpResponse<String> r = api.get("/api/me", USER);
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        assertThat(r.body())
                .contains("\"name\":\"user\"", "\"authorities\":[\"ROLE_USER\"]", "\"principal\":\"user\"")
                .containsPattern("\"thread\":\"VirtualThread\\[#\\d+\\]/runnable@cosched-io-0\"");
    }

    @Test
    void preAuthorizeOnTheBlockingServiceLetsTheAdminIn() throws Exception {
        HttpResponse<String> r = api.get("/api/admin/report", ADMIN);
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        assertThat(r.body()).isEqualTo("1000 accounts, report for admin");
    }

    @Test
    void preAuthorizeDeniesAnAuthenticatedUserWith403NotAChallenge() throws Exception {
        HttpResponse<String> r = api.get("/api/admin/report", USER);
        // 403: the user is known and lacks the role (without the context in the holder it was 401 and a Basic
        // challenge); the resource server's access-denied handler adds its Bearer error description
        assertThat(r.statusCode()).isEqualTo(403);
        assertThat(r.headers().firstValue("WWW-Authenticate").orElse("")).doesNotStartWith("Basic");
    }

    @Test
    void withoutOrWithWrongCredentialsTheAnswerIsAChallenge() throws Exception {
        HttpResponse<String> none = api.get("/api/accounts/1");
        assertThat(none.statusCode()).isEqualTo(401);
        assertThat(none.headers().firstValue("WWW-Authenticate")).isPresent();
        assertThat(api.get("/api/accounts/1", Api.basic("user", "wrong")).statusCode())
                .isEqualTo(401);
    }

    @Test
    void anAnonymousRequestToAPublicRouteRunsWithAnEmptyHolder() throws Exception {
        HttpResponse<String> r = api.get("/api/public/me");
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.body()).contains("\"name\":null", "\"principal\":null").contains("@cosched-io-0");
    }

    @Test
    void jwtBearerTokensReachMethodSecurityToo() throws Exception {
        String carol = TOKENS.token("carol", Instant.now().plusSeconds(300), "ADMIN");
        String dave = TOKENS.token("dave", Instant.now().plusSeconds(300), "USER");
        HttpResponse<String> admin = api.get("/api/admin/report", Api.bearer(carol));
        assertThat(admin.statusCode()).as(admin.body()).isEqualTo(200);
        assertThat(admin.body()).isEqualTo("1000 accounts, report for carol");
        assertThat(api.get("/api/admin/report", Api.bearer(dave)).statusCode()).isEqualTo(403);
        assertThat(api.get("/api/me", Api.bearer(dave)).body()).contains("\"name\":\"dave\"", "\"ROLE_USER\"");
        String expired = TOKENS.token("carol", Instant.now().minusSeconds(300), "ADMIN");
        assertThat(api.get("/api/admin/report", Api.bearer(expired)).statusCode())
                .isEqualTo(401);
        assertThat(api.get("/api/admin/report", Api.bearer(Tokens.forged("carol", "ADMIN")))
                        .statusCode())
                .isEqualTo(401);
    }

    @Test
    void validationAuditingAndRollbackWorkInTheCoroutine() throws Exception {
        HttpResponse<String> invalid =
                api.postJson("/api/accounts/7/deposits", ADMIN, "{\"cents\":-5,\"reference\":\"\"}");
        assertThat(invalid.statusCode()).isEqualTo(400);
        assertThat(invalid.body())
                .contains("\"cents\":\"must be greater than 0\"", "\"reference\":\"must not be blank\"");

        HttpResponse<String> ok =
                api.postJson("/api/accounts/7/deposits", ADMIN, "{\"cents\":250,\"reference\":\"first\"}");
        assertThat(ok.statusCode()).as(ok.body()).isEqualTo(200);
        assertThat(ok.body()).contains("\"balanceCents\":250", "\"lastModifiedBy\":\"admin\"");

        HttpResponse<String> rejected =
                api.postJson("/api/accounts/7/deposits", ADMIN, "{\"cents\":100,\"reference\":\"rollback-me\"}");
        assertThat(rejected.statusCode()).isEqualTo(422);
        HttpResponse<String> statement = api.get("/api/accounts/7/statement", USER);
        assertThat(statement.body())
                .as("rolled back: balance and deposits as before")
                .contains("\"balanceCents\":250", "\"deposits\":[{\"cents\":250,\"reference\":\"first\"}]");

        assertThat(api.postJson("/api/accounts/7/deposits", USER, "{\"cents\":1,\"reference\":\"x\"}")
                        .statusCode())
                .as("a user may not deposit")
                .isEqualTo(403);
    }

    @Test
    void interleavedUsersOnOneLoopEachSeeThemselvesAndTheLoopKeepsNoContext() throws Exception {
        String carol = Api.bearer(TOKENS.token("carol", Instant.now().plusSeconds(300), "ADMIN"));
        String[][] callers = {{USER, "user"}, {ADMIN, "admin"}, {carol, "carol"}, {null, null}};
        ExecutorService clients = Executors.newFixedThreadPool(8);
        try {
            List<Future<?>> done = new ArrayList<>();
            for (int c = 0; c < 8; c++) {
                int offset = c;
                done.add(clients.submit(() -> {
                    Api mine = new Api(port);
                    for (int i = 0; i < 25; i++) {
                        String[] who = callers[(i + offset) % callers.length];
                        String path = who[0] == null ? "/api/public/me" : "/api/me";
                        HttpResponse<String> r = mine.get(path, who[0]);
                        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
                        assertThat(r.body()).contains("\"name\":" + (who[1] == null ? "null" : "\"" + who[1] + "\""));
                    }
                    return null;
                }));
            }
            for (Future<?> f : done) {
                f.get(90, TimeUnit.SECONDS);
            }
        } finally {
            clients.shutdownNow();
        }
        CompletableFuture<Authentication> onLoop = new CompletableFuture<>();
        io.eventLoop(0)
                .execute(
                        () -> onLoop.complete(SecurityContextHolder.getContext().getAuthentication()));
        assertThat(onLoop.get(10, TimeUnit.SECONDS))
                .as("the loop thread's own holder")
                .isNull();
        CompletableFuture<Authentication> onCompute = new CompletableFuture<>();
        Coroutines.computePool()
                .execute(() ->
                        onCompute.complete(SecurityContextHolder.getContext().getAuthentication()));
        assertThat(onCompute.get(10, TimeUnit.SECONDS))
                .as("a compute thread's holder")
                .isNull();
    }

    /** Records where Spring Security checks passwords, around the service's own encoder. */
    @org.springframework.boot.test.context.TestConfiguration
    static class PasswordCheckThreads {
        static final java.util.Set<String> THREADS = java.util.concurrent.ConcurrentHashMap.newKeySet();

        @org.springframework.context.annotation.Bean
        static org.springframework.beans.factory.config.BeanPostProcessor recordPasswordChecks() {
            return new org.springframework.beans.factory.config.BeanPostProcessor() {
                @Override
                public Object postProcessAfterInitialization(Object bean, String name) {
                    if (!(bean instanceof org.springframework.security.crypto.password.PasswordEncoder encoder)) {
                        return bean;
                    }
                    return new org.springframework.security.crypto.password.PasswordEncoder() {
                        @Override
                        public String encode(CharSequence raw) {
                            return encoder.encode(raw);
                        }

                        @Override
                        public boolean matches(CharSequence raw, String encoded) {
                            THREADS.add(Thread.currentThread().getName().replaceAll("\\d+$", "N"));
                            return encoder.matches(raw, encoded);
                        }
                    };
                }
            };
        }
    }

    @Test
    void onlyThePasswordCheckTakesARequestOffItsLoopAndItComesBack() throws Exception {
        String carol = Api.bearer(TOKENS.token("carol", Instant.now().plusSeconds(300), "ADMIN"));
        long before = stats.offLoop();
        for (int i = 0; i < 5; i++) {
            assertThat(api.get("/api/public/me").statusCode()).isEqualTo(200);
            assertThat(api.get("/api/me", carol).statusCode()).isEqualTo(200);
        }
        assertThat(stats.offLoop() - before)
                .as("no session made two hops away, a JWT checked on the loop")
                .isZero();
        for (int i = 0; i < 5; i++) {
            HttpResponse<String> r = api.get("/api/me", USER);
            assertThat(r.body()).contains("@cosched-io-0");
        }
        assertThat(stats.offLoop() - before)
                .as("bcrypt on the compute pool, then back to the loop")
                .isEqualTo(5);
        assertThat(PasswordCheckThreads.THREADS)
                .as("where the passwords were checked")
                .containsExactly("cosched-compute-N");
    }
}
