package io.cosched.spring.boot.autoconfigure.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.cosched.Coroutine;
import io.cosched.IOManager;
import io.cosched.TestSupport;
import io.cosched.jdbc.LoopBoundDataSource;
import io.cosched.spring.boot.autoconfigure.jdbc.IdiomApps.ArrivalOrder;
import io.cosched.spring.boot.autoconfigure.jdbc.IdiomApps.Expected;
import io.cosched.spring.boot.autoconfigure.jdbc.IdiomApps.ItemRow;
import io.cosched.spring.boot.autoconfigure.jdbc.IdiomApps.ItemRows;
import io.cosched.spring.boot.autoconfigure.jdbc.IdiomApps.JdbcIdioms;
import io.cosched.spring.boot.autoconfigure.jdbc.IdiomApps.JpaIdioms;
import io.cosched.spring.boot.autoconfigure.jdbc.IdiomApps.JpaItem;
import io.cosched.spring.boot.autoconfigure.jdbc.IdiomApps.JpaItems;
import jakarta.persistence.EntityManager;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.springframework.boot.Banner;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.core.namedparam.MapSqlParameterSource;
import org.springframework.jdbc.core.namedparam.NamedParameterJdbcTemplate;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.core.simple.SimpleJdbcCall;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * Every way Spring reads and writes through a DataSource, each under overload on cosched's loop: 256 coroutines on
 * one loop whose pool has 10 connections, each doing the idiom over and over for {@link #WINDOW}. Every idiom must
 * fail nothing, give every connection back to its pool, keep its line of borrowers in order (nobody overtaken by more
 * than the pool's size; measured in carrier mode, where the order the test sees is the line's), and keep its
 * transactions whole (no rolled-back row left). A borrow whose connection goes
 * back to HikariCP by any path but the borrow's own close (Spring hands back a stream's connection through its
 * statement) would lose its turn in the line: the pool would starve with idle connections.
 *
 * <p>Each subclass runs it against one real server and driver; tagged {@code both-modes}, so it runs in carrier and in
 * fallback mode. The window is 500 ms an idiom by default, {@code -Dcosched.test.idioms.window=10s} for the long run
 * (CONTRIBUTING.md).
 */
@Tag("both-modes")
@Timeout(600)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class SpringIdiomsContract {

    static final int COROUTINES = 256;
    static final int POOL_SIZE = 10;
    static final Duration WINDOW = Duration.parse("PT" + System.getProperty("cosched.test.idioms.window", "0.5s"));

    /** The server and driver this subclass runs against. */
    abstract TestServer server();

    private String url() {
        return server().url();
    }

    private String user() {
        return server().user();
    }

    private String password() {
        return server().password();
    }

    private String driverName() {
        return server().driverName();
    }

    /** Statements that (re)create the function {@code idiom_add(a, b)}, which answers {@code a + b}. */
    abstract List<String> function();

    private List<String> schema() {
        List<String> schema = new ArrayList<>(List.of(
                "DROP TABLE IF EXISTS idiom_log",
                "DROP TABLE IF EXISTS idiom_item",
                "CREATE TABLE idiom_item (id BIGINT PRIMARY KEY, name VARCHAR(64) NOT NULL, qty INT NOT NULL)",
                "CREATE TABLE idiom_log (id BIGINT PRIMARY KEY, note VARCHAR(64) NOT NULL)"));
        schema.addAll(function());
        return schema;
    }

    private App jdbcApp;
    private App jpaApp;
    private final AtomicLong ids = new AtomicLong(1);

    @BeforeAll
    void startApplications() throws Exception {
        assumeTrue(url() != null, driverName() + ": no server URL is set: .ci/run starts one on loopback and sets it");
        try (Connection c = DriverManager.getConnection(url(), user(), password());
                Statement s = c.createStatement()) {
            for (String sql : schema()) {
                s.execute(sql);
            }
            try (PreparedStatement insert =
                    c.prepareStatement("INSERT INTO idiom_item (id, name, qty) VALUES (?, ?, 0)")) {
                for (int i = 1; i <= IdiomApps.ITEMS; i++) {
                    insert.setLong(1, i);
                    insert.setString(2, "item " + i);
                    insert.addBatch();
                }
                insert.executeBatch();
            }
        }
        jdbcApp = App.of(start(IdiomApps.Jdbc.class), ids);
        jpaApp = App.of(start(IdiomApps.Jpa.class), ids);
    }

    private ConfigurableApplicationContext start(Class<?> app) {
        Map<String, Object> properties = new LinkedHashMap<>();
        properties.put("spring.datasource.url", url());
        properties.put("spring.datasource.username", user());
        properties.put("spring.datasource.password", password());
        properties.put("spring.datasource.hikari.maximum-pool-size", POOL_SIZE);
        // long past any wait in a line that moves (256 / 10 borrowers ahead, milliseconds each), short enough that
        // a line that stopped fails the test in seconds, not in HikariCP's default 30
        properties.put("spring.datasource.hikari.connection-timeout", 10_000);
        properties.put("cosched.io.threads", 1);
        properties.put("cosched.stall.threshold", 0);
        properties.put("logging.level.root", "warn");
        return new SpringApplicationBuilder(app)
                .web(WebApplicationType.NONE)
                .bannerMode(Banner.Mode.OFF)
                .properties(properties)
                .run();
    }

    @AfterAll
    void stopApplications() {
        for (App app : new App[] {jdbcApp, jpaApp}) {
            if (app != null) {
                app.context().close();
            }
        }
    }

    /** One idiom: what a coroutine does once. */
    interface Op {
        void run(App app, int worker) throws Exception;
    }

    record Idiom(String name, boolean jpa, Op op) {
        @Override
        public String toString() {
            return name;
        }
    }

    static Stream<Idiom> idioms() {
        return Stream.of(
                jdbc(
                        "JdbcTemplate.query",
                        (app, w) -> assertThat(app.bean(JdbcTemplate.class)
                                        .query(
                                                "SELECT id, name, qty FROM idiom_item WHERE id < ?",
                                                (rs, i) -> rs.getLong(1),
                                                6))
                                .hasSize(5)),
                jdbc("JdbcTemplate.queryForStream", (app, w) -> {
                    try (Stream<Long> rows = app.bean(JdbcTemplate.class)
                            .queryForStream("SELECT id FROM idiom_item WHERE id < ?", (rs, i) -> rs.getLong(1), 6)) {
                        assertThat(rows.count()).isEqualTo(5);
                    }
                }),
                jdbc("JdbcTemplate.batchUpdate", (app, w) -> {
                    long id = app.ids(3);
                    app.bean(JdbcTemplate.class)
                            .batchUpdate(
                                    "INSERT INTO idiom_log (id, note) VALUES (?, 'committed')",
                                    List.of(new Object[] {id}, new Object[] {id + 1}, new Object[] {id + 2}));
                }),
                jdbc(
                        "JdbcClient.list",
                        (app, w) -> assertThat(app.bean(JdbcClient.class)
                                        .sql("SELECT name FROM idiom_item WHERE id < ?")
                                        .param(6)
                                        .query(String.class)
                                        .list())
                                .hasSize(5)),
                jdbc("JdbcClient.stream", (app, w) -> {
                    try (Stream<String> names = app
                            .bean(JdbcClient.class)
                            .sql("SELECT name FROM idiom_item WHERE id < ?")
                            .param(6)
                            .query(String.class)
                            .stream()) {
                        assertThat(names.count()).isEqualTo(5);
                    }
                }),
                jdbc(
                        "JdbcClient.optional",
                        (app, w) -> assertThat(app.bean(JdbcClient.class)
                                        .sql("SELECT name FROM idiom_item WHERE id = ?")
                                        .param(item(w))
                                        .query(String.class)
                                        .optional())
                                .contains("item " + item(w))),
                jdbc(
                        "JdbcClient.update",
                        (app, w) -> assertThat(app.bean(JdbcClient.class)
                                        .sql("UPDATE idiom_item SET qty = qty + 1 WHERE id = ?")
                                        .param(item(w))
                                        .update())
                                .isOne()),
                jdbc(
                        "NamedParameterJdbcTemplate.query",
                        (app, w) -> assertThat(app.bean(NamedParameterJdbcTemplate.class)
                                        .queryForList(
                                                "SELECT id FROM idiom_item WHERE id < :below",
                                                new MapSqlParameterSource("below", 6),
                                                Long.class))
                                .hasSize(5)),
                jdbc("NamedParameterJdbcTemplate.queryForStream", (app, w) -> {
                    try (Stream<Long> rows = app.bean(NamedParameterJdbcTemplate.class)
                            .queryForStream(
                                    "SELECT id FROM idiom_item WHERE id < :below",
                                    new MapSqlParameterSource("below", 6),
                                    (rs, i) -> rs.getLong(1))) {
                        assertThat(rows.count()).isEqualTo(5);
                    }
                }),
                jdbc(
                        "@Transactional commit",
                        (app, w) -> app.bean(JdbcIdioms.class).commit(item(w), app.ids(1))),
                jdbc("@Transactional rollback", (app, w) -> {
                    try {
                        app.bean(JdbcIdioms.class).rollback(app.ids(1));
                        throw new AssertionError("not rolled back");
                    } catch (Expected e) {
                        // rolled back
                    }
                }),
                jdbc("@Transactional nested", (app, w) -> {
                    JdbcIdioms idioms = app.bean(JdbcIdioms.class);
                    long id = app.ids(2);
                    idioms.nested(idioms, id, id + 1);
                }),
                jdbc(
                        "@Transactional with a stream",
                        (app, w) -> assertThat(app.bean(JdbcIdioms.class).streamThenWrite(app.ids(1)))
                                .isEqualTo(5)),
                jdbc("TransactionTemplate commit", (app, w) -> {
                    JdbcClient jdbc = app.bean(JdbcClient.class);
                    long id = app.ids(1);
                    transactions(app, TransactionDefinition.PROPAGATION_REQUIRED)
                            .executeWithoutResult(status -> {
                                jdbc.sql("UPDATE idiom_item SET qty = qty + 1 WHERE id = ?")
                                        .param(item(w))
                                        .update();
                                jdbc.sql("INSERT INTO idiom_log (id, note) VALUES (?, 'committed')")
                                        .param(id)
                                        .update();
                            });
                }),
                jdbc("TransactionTemplate rollback", (app, w) -> {
                    JdbcClient jdbc = app.bean(JdbcClient.class);
                    long id = app.ids(1);
                    transactions(app, TransactionDefinition.PROPAGATION_REQUIRED)
                            .executeWithoutResult(status -> {
                                jdbc.sql("INSERT INTO idiom_log (id, note) VALUES (?, 'rolled back')")
                                        .param(id)
                                        .update();
                                status.setRollbackOnly();
                            });
                }),
                jdbc("TransactionTemplate nested", (app, w) -> {
                    JdbcClient jdbc = app.bean(JdbcClient.class);
                    long id = app.ids(2);
                    transactions(app, TransactionDefinition.PROPAGATION_REQUIRED)
                            .executeWithoutResult(outer -> {
                                jdbc.sql("INSERT INTO idiom_log (id, note) VALUES (?, 'committed')")
                                        .param(id)
                                        .update();
                                transactions(app, TransactionDefinition.PROPAGATION_NESTED)
                                        .executeWithoutResult(inner -> {
                                            jdbc.sql("INSERT INTO idiom_log (id, note) VALUES (?, 'rolled back')")
                                                    .param(id + 1)
                                                    .update();
                                            inner.setRollbackOnly();
                                        });
                            });
                }),
                jdbc("Spring Data JDBC repository", (app, w) -> {
                    ItemRows rows = app.bean(ItemRows.class);
                    ItemRow row = rows.findById(item(w)).orElseThrow();
                    rows.save(new ItemRow(row.id(), row.name(), row.qty() + 1));
                }),
                jdbc("Spring Data JDBC repository stream", (app, w) -> {
                    try (Stream<ItemRow> rows = app.bean(ItemRows.class).findByIdLessThan(6)) {
                        assertThat(rows.count()).isEqualTo(5);
                    }
                }),
                jdbc(
                        "SimpleJdbcCall",
                        (app, w) -> assertThat(app.call().executeFunction(Integer.class, Map.of("a", w, "b", 1)))
                                .isEqualTo(w + 1)),
                jpa(
                        "EntityManager.find",
                        (app, w) -> assertThat(app.bean(EntityManager.class).find(JpaItem.class, item(w)).qty)
                                .isNotNegative()),
                jpa(
                        "EntityManager in @Transactional",
                        (app, w) -> app.bean(JpaIdioms.class).entityManagerUpdate(item(w))),
                jpa("@Transactional rollback (JPA)", (app, w) -> {
                    try {
                        app.bean(JpaIdioms.class).rollback(item(w));
                        throw new AssertionError("not rolled back");
                    } catch (Expected e) {
                        // rolled back
                    }
                }),
                jpa(
                        "Spring Data JPA findById",
                        (app, w) -> assertThat(app.bean(JpaItems.class).findById(item(w)))
                                .isPresent()),
                jpa(
                        "Spring Data JPA save",
                        (app, w) -> app.bean(JpaIdioms.class).repositoryUpdate(item(w))),
                jpa(
                        "Spring Data JPA stream",
                        (app, w) ->
                                assertThat(app.bean(JpaIdioms.class).stream()).isEqualTo(5)),
                jpa(
                        "JdbcTemplate stream in a JPA transaction",
                        (app, w) -> assertThat(app.bean(JpaIdioms.class).jdbcStreamInJpaTransaction(item(w)))
                                .isEqualTo(5)));
    }

    private static Idiom jdbc(String name, Op op) {
        return new Idiom(name, false, op);
    }

    private static Idiom jpa(String name, Op op) {
        return new Idiom(name, true, op);
    }

    private static long item(int worker) {
        return 1 + worker % IdiomApps.ITEMS;
    }

    private static TransactionTemplate transactions(App app, int propagation) {
        TransactionTemplate t = new TransactionTemplate(app.bean(PlatformTransactionManager.class));
        t.setPropagationBehavior(propagation);
        return t;
    }

    /**
     * A running application, with what its idioms share: ids for {@code idiom_log} rows, unique across the class's
     * run, and one {@link SimpleJdbcCall}, kept as a team keeps one (it reads the function's metadata once).
     */
    record App(ConfigurableApplicationContext context, AtomicLong idSource, SimpleJdbcCall call) {

        static App of(ConfigurableApplicationContext context, AtomicLong idSource) {
            return new App(
                    context,
                    idSource,
                    new SimpleJdbcCall(context.getBean(JdbcTemplate.class)).withFunctionName("idiom_add"));
        }

        <T> T bean(Class<T> type) {
            return context.getBean(type);
        }

        long ids(int n) {
            return idSource.getAndAdd(n);
        }
    }

    /**
     * Borrows every connection of loop 0's pool at once and gives them back, just before the window: HikariCP checks a
     * connection idle for over 500 ms with a round trip to the database before lending it, and a borrower parked in
     * that check is overtaken by everyone served meanwhile. After the idiom's first run (seconds, for Hibernate's
     * first EntityManager) every connection but one was that idle, and CI once saw 41 borrowers overtaken on
     * EntityManager.find, at the window's start, where the line itself keeps its order.
     */
    private static void touchEveryConnection(IOManager io, LoopBoundDataSource bound) throws Exception {
        int n = bound.pools().get(0).getHikariPoolMXBean().getTotalConnections();
        java.util.concurrent.CountDownLatch allHeld = new java.util.concurrent.CountDownLatch(n);
        List<Coroutine<Void>> borrowers = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            borrowers.add(io.spawnOn(0, () -> {
                try (Connection c = bound.getConnection()) {
                    allHeld.countDown();
                    allHeld.await(); // all of them out at once: none is lent twice
                }
                return null;
            }));
        }
        for (Coroutine<Void> b : borrowers) {
            b.toFuture().get(30, TimeUnit.SECONDS);
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("idioms")
    void failsNothingUnderOverloadAndGivesEveryConnectionBack(Idiom idiom) throws Exception {
        App app = idiom.jpa() ? jpaApp : jdbcApp;
        IOManager io = app.bean(IOManager.class);
        ArrivalOrder order = app.bean(ArrivalOrder.class);
        LoopBoundDataSource bound = (LoopBoundDataSource) order.getTargetDataSource();
        io.spawnOn(0, () -> {
                    bound.getConnection().close(); // starts the pool if nothing has yet
                    return null;
                })
                .toFuture()
                .get(30, TimeUnit.SECONDS);
        // as after a service's first seconds: while HikariCP is still opening the pool's connections, the borrowers
        // the line let in wait inside HikariCP, where a newcomer may take a connection given back before them
        TestSupport.eventually(
                Duration.ofSeconds(30),
                () -> bound.getHikariPoolMXBean().getTotalConnections() == POOL_SIZE,
                () -> "the pool has " + bound.getHikariPoolMXBean().getTotalConnections() + " connections");
        // the idiom's first run loads and initialises what it uses (Hibernate's first EntityManager, say): a coroutine
        // that waits for a class another is initialising is overtaken by everyone served meanwhile, which says nothing
        // of the line's order (CI once saw 11 on EntityManager.find, every other idiom 0-3)
        io.spawnOn(0, () -> {
                    idiom.op().run(app, 0);
                    return null;
                })
                .toFuture()
                .get(30, TimeUnit.SECONDS);
        touchEveryConnection(io, bound);
        order.reset();
        AtomicInteger failures = new AtomicInteger();
        ConcurrentLinkedQueue<String> firstFailures = new ConcurrentLinkedQueue<>();
        AtomicInteger mostWaiting = new AtomicInteger();
        int[] done = new int[COROUTINES]; // each worker its own slot; read after the joins
        long deadline = System.nanoTime() + WINDOW.toNanos();
        List<Coroutine<Void>> workers = new ArrayList<>();
        for (int w = 0; w < COROUTINES; w++) {
            int worker = w;
            workers.add(io.spawnOn(0, () -> {
                while (done[worker] == 0 || System.nanoTime() < deadline) {
                    try {
                        idiom.op().run(app, worker);
                    } catch (Exception | AssertionError e) {
                        if (failures.incrementAndGet() <= 5) {
                            firstFailures.add(describe(e));
                        }
                    }
                    done[worker]++;
                    mostWaiting.accumulateAndGet(bound.lines().get(0).waiting(), Math::max);
                }
                return null;
            }));
        }
        for (Coroutine<Void> c : workers) {
            c.toFuture().get(WINDOW.toSeconds() + 120, TimeUnit.SECONDS);
        }

        assertThat(failures.get()).as("failures, the first: %s", firstFailures).isZero();
        assertThat(done).as("every coroutine had its turn").doesNotContain(0);
        assertThat(mostWaiting.get())
                .as("borrowers waited in line at once (the pool was overloaded)")
                .isGreaterThan(POOL_SIZE);
        LoopBoundDataSource.Line line = bound.lines().get(0);
        assertThat(line.lent()).as("turns still out: %s", line).isZero();
        assertThat(line.waiting()).as("borrowers still waiting: %s", line).isZero();
        assertThat(bound.pools().get(0).getHikariPoolMXBean().getActiveConnections())
                .as("connections still out of the pool")
                .isZero();
        assertThat(bound.pools().get(0).getHikariPoolMXBean().getTotalConnections())
                .isLessThanOrEqualTo(POOL_SIZE);
        int overtaken = order.mostOvertaken();
        System.out.printf(
                "%s, %s: %d operations, at most %d waiting, at most %d overtaken%n",
                driverName(), idiom, IntStream.of(done).sum(), mostWaiting.get(), overtaken);
        if (TestSupport.carrierMode()) {
            // One carrier runs the coroutines one at a time, and none parks between asking (its ticket here) and
            // joining the line: the order measured is the line's. In fallback mode two carrier threads, which the
            // OS schedules, run them: a thread descheduled between its ticket and the line is overtaken by every
            // borrower the other serves meanwhile, which says nothing of the line (LoopGateTest checks its order).
            // Past the line a borrower can still park inside HikariCP (it checks a connection idle for over 500 ms
            // with a round trip to the database), and the others let in finish borrows meanwhile: CI saw 11 with a
            // pool of 10 once, on EntityManager.find. A line out of order would show hundreds (245 wait at once).
            assertThat(overtaken)
                    .as("borrowers served before one that asked earlier")
                    .isLessThanOrEqualTo(2 * POOL_SIZE);
        }
        assertThat(app.bean(JdbcClient.class)
                        .sql("SELECT COUNT(*) FROM idiom_log WHERE note = 'rolled back'")
                        .query(Long.class)
                        .single())
                .as("rows of rolled-back transactions")
                .isZero();
        assertThat(app.bean(JdbcClient.class)
                        .sql("SELECT COUNT(*) FROM idiom_item WHERE qty < 0")
                        .query(Long.class)
                        .single())
                .as("rows a rolled-back JPA transaction changed")
                .isZero();
    }

    private static String describe(Throwable e) {
        StringBuilder s = new StringBuilder(e.toString());
        for (Throwable cause = e.getCause(); cause != null; cause = cause.getCause()) {
            s.append(" <- ").append(cause);
        }
        return s.toString();
    }
}
