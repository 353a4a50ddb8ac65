package io.cosched.spring.boot.autoconfigure.jdbc;

import com.zaxxer.hikari.HikariDataSource;
import io.cosched.Coroutine;
import io.cosched.CoroutineState;
import io.cosched.IOManager;
import io.cosched.spring.boot.autoconfigure.CoschedAutoConfiguration;
import io.cosched.jdbc.LoopBoundDataSource;
import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.JdbcClientAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.JdbcTemplateAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.metrics.DataSourcePoolMetricsAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.dao.DataAccessException;
import org.springframework.jdbc.core.simple.JdbcClient;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;

import static io.cosched.TestSupport.eventually;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Spring Boot's DataSource for PostgreSQL on cosched's loops, against the real server {@code .ci/run}
 * starts (skipped with the reason where none is configured; {@code LoopBoundDataSourceTest} and the
 * core's {@code LoopSocketTest} run without it).
 */
@Timeout(120)
class CoschedJdbcAutoConfigurationTest {

    private static final String URL = System.getenv("COSCHED_TEST_POSTGRES_URL");
    private static final String USER = System.getenv().getOrDefault("COSCHED_TEST_POSTGRES_USER", "cosched");
    private static final String PASSWORD = System.getenv().getOrDefault("COSCHED_TEST_POSTGRES_PASSWORD", "cosched");
    private static final String RESTART = System.getenv("COSCHED_TEST_POSTGRES_RESTART");
    private static final String APP = "cosched-jdbc-test";

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(CoschedAutoConfiguration.class, CoschedJdbcAutoConfiguration.class,
                    DataSourceAutoConfiguration.class, JdbcTemplateAutoConfiguration.class, JdbcClientAutoConfiguration.class))
            .withPropertyValues("spring.datasource.url=" + URL + "?ApplicationName=" + APP,
                    "spring.datasource.username=" + USER, "spring.datasource.password=" + PASSWORD,
                    "spring.datasource.hikari.maximum-pool-size=4", "spring.datasource.hikari.connection-timeout=3000",
                    "cosched.io.threads=2", "cosched.stall.threshold=0");

    @BeforeAll
    static void needsPostgres() {
        assumeTrue(URL != null, "COSCHED_TEST_POSTGRES_URL is not set: .ci/run starts PostgreSQL on loopback and sets it");
    }

    @Test
    void springBootsHikariDataSourceBecomesOnePoolPerLoop() {
        runner.run(context -> {
            DataSource ds = context.getBean(DataSource.class);
            assertThat(ds).isInstanceOf(LoopBoundDataSource.class).isInstanceOf(HikariDataSource.class);
            LoopBoundDataSource bound = (LoopBoundDataSource) ds;
            assertThat(bound.pools()).extracting(HikariDataSource::getMaximumPoolSize).containsExactly(2, 2);
            // from the main thread, before any coroutine: it starts the pools and works
            assertThat(context.getBean(JdbcClient.class).sql("SELECT 41 + 1").query(Integer.class).single()).isEqualTo(42);
        });
    }

    @Test
    void aCoroutinesQueriesUseItsOwnLoopsPoolAndOnlyThatLoopResumesIt() {
        runner.run(context -> {
            IOManager io = context.getBean(IOManager.class);
            JdbcClient jdbc = context.getBean(JdbcClient.class);
            LoopBoundDataSource bound = context.getBean(LoopBoundDataSource.class);
            for (int loop = 0; loop < 2; loop++) {
                int home = loop;
                queries(io, jdbc, home, 5); // the pool opens its connections (on the Hikari thread)
                long remote = io.carrierStats().get(home).remoteWakeups();
                long local = io.carrierStats().get(home).localWakeups();
                int sum = queries(io, jdbc, home, 30);
                assertThat(sum).isEqualTo(30 * 31 / 2);
                assertThat(io.carrierStats().get(home).localWakeups() - local).as("loop %d", home).isGreaterThanOrEqualTo(30);
                assertThat(io.carrierStats().get(home).remoteWakeups() - remote).as("loop %d", home).isZero();
                assertThat(bound.pools().get(home).getHikariPoolMXBean().getTotalConnections()).isPositive();
            }
        });
    }

    private static int queries(IOManager io, JdbcClient jdbc, int loop, int n) throws Exception {
        return io.spawnOn(loop, () -> {
            int sum = 0;
            for (int i = 1; i <= n; i++) {
                sum += jdbc.sql("SELECT ?::int").param(i).query(Integer.class).single();
            }
            return sum;
        }).join();
    }

    @Test
    void hikarisMetersReportEachLoopsPool() {
        runner.withConfiguration(AutoConfigurations.of(MetricsAutoConfiguration.class,
                        CompositeMeterRegistryAutoConfiguration.class, SimpleMetricsExportAutoConfiguration.class,
                        DataSourcePoolMetricsAutoConfiguration.class))
                .run(context -> {
                    IOManager io = context.getBean(IOManager.class);
                    JdbcClient jdbc = context.getBean(JdbcClient.class);
                    queries(io, jdbc, 0, 3);
                    queries(io, jdbc, 1, 3);
                    MeterRegistry registry = context.getBean(MeterRegistry.class);
                    assertThat(registry.find("hikaricp.connections.max").gauges())
                            .extracting(g -> g.getId().getTag("pool") + "=" + (int) g.value())
                            .containsExactlyInAnyOrder("HikariPool-loop0=2", "HikariPool-loop1=2");
                    assertThat(registry.get("jdbc.connections.max").gauge().value()).isEqualTo(4);
                    assertThat(registry.get("cosched.jdbc.interrupts.deferred").tag("pool", "HikariPool").functionCounter()
                            .count()).isZero();
                    assertThat(registry.get("cosched.jdbc.statements.cancelled").tag("pool", "HikariPool").functionCounter()
                            .count()).isZero();
                });
    }

    @Test
    void anInterruptedCoroutineFinishesItsStatementKeepsItsConnectionAndIsInterruptedAfterwards() {
        runner.run(context -> {
            IOManager io = context.getBean(IOManager.class);
            LoopBoundDataSource ds = context.getBean(LoopBoundDataSource.class);
            java.util.concurrent.CountDownLatch running = new java.util.concurrent.CountDownLatch(1);
            Coroutine<String> c = io.spawnOn(0, () -> {
                int before = pid(ds);
                int during;
                boolean interruptedInside;
                try (Connection conn = ds.getConnection(); Statement s = conn.createStatement()) {
                    running.countDown();
                    try (ResultSet rs = s.executeQuery("SELECT pg_backend_pid() FROM pg_sleep(0.4)")) {
                        rs.next();
                        during = rs.getInt(1);
                    }
                    interruptedInside = Thread.currentThread().isInterrupted();
                }
                boolean interruptedAfter = Thread.interrupted();
                return "same connection " + (during == before && pid(ds) == before) + ", interrupted inside "
                        + interruptedInside + ", after " + interruptedAfter;
            });
            assertThat(running.await(30, TimeUnit.SECONDS)).isTrue();
            eventually(Duration.ofSeconds(10), () -> c.state() == CoroutineState.WAITING, c::toString);
            c.interrupt();
            assertThat(c.toFuture().get(30, TimeUnit.SECONDS)).isEqualTo("same connection true, interrupted inside false, after true");
            assertThat(ds.interruptsDeferred()).isEqualTo(1);
            assertThat(ds.statementsCancelled()).as("it ended within the second cosched waits").isZero();
        });
    }

    @Test
    void aStatementThatRunsOnPastTheGraceIsCancelledOnTheServerAndTheConnectionStaysUsable() {
        runner.withPropertyValues("cosched.jdbc.cancel-statements-after=100ms").run(context -> {
            IOManager io = context.getBean(IOManager.class);
            LoopBoundDataSource ds = context.getBean(LoopBoundDataSource.class);
            java.util.concurrent.CountDownLatch running = new java.util.concurrent.CountDownLatch(1);
            Coroutine<String> c = io.spawnOn(0, () -> {
                int before = pid(ds);
                String outcome;
                long started = System.nanoTime();
                try (Connection conn = ds.getConnection(); Statement s = conn.createStatement()) {
                    running.countDown();
                    s.execute("SELECT pg_sleep(30)");
                    outcome = "not cancelled";
                } catch (java.sql.SQLException e) {
                    outcome = e.getSQLState();
                }
                long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
                boolean interrupted = Thread.interrupted();
                return outcome + " within 5 s " + (ms < 5000) + ", interrupted " + interrupted + ", same connection "
                        + (pid(ds) == before);
            });
            assertThat(running.await(30, TimeUnit.SECONDS)).isTrue();
            eventually(Duration.ofSeconds(10), () -> c.state() == CoroutineState.WAITING, c::toString);
            c.interrupt();
            assertThat(c.toFuture().get(30, TimeUnit.SECONDS))
                    .isEqualTo("57014 within 5 s true, interrupted true, same connection true");
            assertThat(ds.statementsCancelled()).isEqualTo(1);
            assertThat(ds.pools().get(0).getHikariPoolMXBean().getTotalConnections()).as("none broken, none added").isEqualTo(1);
        });
    }

    @Test
    void aCancelDueAfterTheBorrowEndedNeverReachesTheNextBorrowersStatement() {
        runner.withPropertyValues("cosched.jdbc.cancel-statements-after=300ms").run(context -> {
            IOManager io = context.getBean(IOManager.class);
            LoopBoundDataSource ds = context.getBean(LoopBoundDataSource.class);
            java.util.concurrent.CountDownLatch running = new java.util.concurrent.CountDownLatch(1);
            Coroutine<Void> first = io.spawnOn(0, () -> {
                try (Connection conn = ds.getConnection(); Statement s = conn.createStatement()) {
                    running.countDown();
                    s.execute("SELECT pg_sleep(0.2)");
                }
                return null;
            });
            assertThat(running.await(30, TimeUnit.SECONDS)).isTrue();
            eventually(Duration.ofSeconds(10), () -> first.state() == CoroutineState.WAITING, first::toString);
            first.interrupt();
            first.toFuture().get(30, TimeUnit.SECONDS);
            // the first borrow ended before its cancel was due: the same loop's connection now runs another statement
            String next = io.spawnOn(0, () -> {
                try (Connection conn = ds.getConnection(); Statement s = conn.createStatement()) {
                    s.execute("SELECT pg_sleep(0.6)");
                    return "ran to the end";
                } catch (java.sql.SQLException e) {
                    return e.getSQLState();
                }
            }).toFuture().get(30, TimeUnit.SECONDS);
            assertThat(next).isEqualTo("ran to the end");
            assertThat(ds.statementsCancelled()).isZero();
        });
    }

    private static int pid(DataSource ds) throws java.sql.SQLException {
        try (Connection conn = ds.getConnection(); Statement s = conn.createStatement();
             ResultSet rs = s.executeQuery("SELECT pg_backend_pid()")) {
            rs.next();
            return rs.getInt(1);
        }
    }

    @Test
    void offWhenTurnedOff() {
        runner.withPropertyValues("cosched.jdbc.enabled=false").run(context ->
                assertThat(context.getBean(DataSource.class)).isNotInstanceOf(LoopBoundDataSource.class));
    }

    @Test
    void terminatedConnectionsFailTheirQueriesWithSQLExceptionsAndArReplaced() {
        underLoad(() -> {
            try (Connection admin = DriverManager.getConnection(URL, USER, PASSWORD); Statement s = admin.createStatement();
                 ResultSet rs = s.executeQuery("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                         + "WHERE application_name = '" + APP + "'")) {
                rs.next();
                assertThat(rs.getInt(1)).isPositive();
            }
        });
    }

    @Test
    void aPostgresRestartMidLoadFailsQueriesThenThePoolsRecover() {
        assumeTrue(RESTART != null, "COSCHED_TEST_POSTGRES_RESTART is not set (.ci/services.sh sets it); "
                + "terminatedConnectionsFailTheirQueriesWithSQLExceptionsAndArReplaced covers the same without a restart");
        underLoad(() -> {
            Process p = new ProcessBuilder("sh", "-c", RESTART).redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes());
            assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
            assertThat(p.exitValue()).as(out).isZero();
        });
    }

    private static String stuck(List<Coroutine<Void>> all, AtomicIntegerArray afterFault) {
        StringBuilder sb = new StringBuilder();
        for (int w = 0; w < all.size(); w++) {
            if (afterFault.get(w) < 3) {
                sb.append("\n").append(all.get(w));
                for (StackTraceElement e : all.get(w).thread().getStackTrace()) {
                    sb.append("\n    at ").append(e);
                }
            }
        }
        return sb.toString();
    }

    interface Fault {
        void inject() throws Exception;
    }

    /**
     * Eight coroutines (four per loop) query in a loop; the fault strikes; every query either answers
     * or fails with a DataAccessException (none hangs); then every coroutine gets answers again, and
     * once the pools have their connections back the answers are resumed by the coroutines' own loops.
     */
    private void underLoad(Fault fault) {
        runner.run(context -> {
            IOManager io = context.getBean(IOManager.class);
            JdbcClient jdbc = context.getBean(JdbcClient.class);
            int workers = 8;
            AtomicBoolean stop = new AtomicBoolean();
            AtomicBoolean struck = new AtomicBoolean();
            AtomicInteger failures = new AtomicInteger();
            AtomicIntegerArray afterFault = new AtomicIntegerArray(workers);
            List<Coroutine<Void>> all = new ArrayList<>();
            for (int w = 0; w < workers; w++) {
                int me = w;
                all.add(io.spawnOn(w % 2, () -> {
                    while (!stop.get()) {
                        boolean after = struck.get();
                        try {
                            jdbc.sql("SELECT pg_sleep(0.005)").query().listOfRows();
                            if (after) {
                                afterFault.incrementAndGet(me);
                            }
                        } catch (DataAccessException e) {
                            failures.incrementAndGet();
                        }
                    }
                    return null;
                }));
            }
            eventually(Duration.ofSeconds(30), () -> context.getBean(LoopBoundDataSource.class).getHikariPoolMXBean()
                    .getActiveConnections() > 0, () -> "no query running");
            fault.inject();
            struck.set(true);
            eventually(Duration.ofSeconds(60), () -> {
                for (int w = 0; w < workers; w++) {
                    if (afterFault.get(w) < 3) {
                        return false;
                    }
                }
                return true;
            }, () -> "not every coroutine recovered: " + afterFault + ", failures " + failures + "; stuck: "
                    + stuck(all, afterFault));
            assertThat(failures.get()).as("the fault was felt").isPositive();
            // settled: the pools hold their connections again, and the answers stay on the loops
            LoopBoundDataSource bound = context.getBean(LoopBoundDataSource.class);
            eventually(Duration.ofSeconds(30), () -> bound.getHikariPoolMXBean().getTotalConnections() == 4,
                    () -> "pools not refilled: " + bound.getHikariPoolMXBean().getTotalConnections());
            int failed = failures.get();
            long remote = io.stats().remoteWakeups();
            long local = io.stats().localWakeups();
            eventually(Duration.ofSeconds(30), () -> io.stats().localWakeups() - local > 200, () -> "too few queries");
            stop.set(true);
            for (Coroutine<Void> c : all) {
                c.join();
            }
            assertThat(failures.get()).isEqualTo(failed);
            // Every answer is a local wake-up. After a restart the odd remote one was seen (1 in one run of
            // three; likely HikariCP's own thread handing a late replacement connection to a coroutine
            // waiting in the pool). Answers resumed by another thread would show as hundreds.
            long localDelta = io.stats().localWakeups() - local;
            assertThat(io.stats().remoteWakeups() - remote).as("remote wake-ups against %d local", localDelta)
                    .isLessThanOrEqualTo(localDelta / 50);
        });
    }
}
