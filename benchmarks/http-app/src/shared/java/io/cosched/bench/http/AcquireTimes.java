package io.cosched.bench.http;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLongArray;
import javax.sql.DataSource;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.Ordered;
import org.springframework.jdbc.datasource.DelegatingDataSource;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * How long the application waits for a pooled connection, the same way on every stack: the DataSource bean is
 * wrapped (after cosched has put it on its loops) and every {@code getConnection()} timed, line and pool wait
 * included. {@code GET /acquire-times} answers the count, p50, p99 and max in milliseconds since the last call and
 * starts over. On with {@code --bench.acquire-times=true} (benchmarks/pool.sh); off, nothing is wrapped.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnProperty("bench.acquire-times")
@RestController
public class AcquireTimes {

    // log-linear buckets of microseconds, 5 significant bits: a value is off by at most 1/32 of itself
    private static final AtomicLongArray BUCKETS = new AtomicLongArray(32 * 40);

    static int bucket(long micros) {
        long v = Math.max(0, micros);
        int msb = 63 - Long.numberOfLeadingZeros(v | 1);
        int shift = Math.max(0, msb - 5);
        return Math.min(BUCKETS.length() - 1, shift * 32 + (int) (v >>> shift));
    }

    /** The largest value in bucket {@code index}, in microseconds. */
    static long upper(int index) {
        int shift = Math.max(0, index / 32 - 1);
        long m = index - shift * 32L;
        return ((m + 1) << shift) - 1;
    }

    @Bean
    static BeanPostProcessor acquireTimer() {
        return new Timer();
    }

    private static final class Timer implements BeanPostProcessor, Ordered {
        @Override
        public Object postProcessAfterInitialization(Object bean, String beanName) {
            if (!(bean instanceof DataSource ds) || bean instanceof Timed) {
                return bean;
            }
            return new Timed(ds);
        }

        @Override
        public int getOrder() {
            return Ordered.LOWEST_PRECEDENCE; // after cosched's post-processor, which must see HikariCP's
        }
    }

    private static final class Timed extends DelegatingDataSource {
        Timed(DataSource target) {
            super(target);
        }

        @Override
        public Connection getConnection() throws SQLException {
            long started = System.nanoTime();
            Connection c = super.getConnection();
            BUCKETS.incrementAndGet(bucket(TimeUnit.NANOSECONDS.toMicros(System.nanoTime() - started)));
            return c;
        }
    }

    @GetMapping("/acquire-times")
    public String acquireTimes() {
        long[] counts = new long[BUCKETS.length()];
        long total = 0;
        int last = 0;
        for (int i = 0; i < counts.length; i++) {
            counts[i] = BUCKETS.getAndSet(i, 0);
            total += counts[i];
            if (counts[i] > 0) {
                last = i;
            }
        }
        return "{\"count\":" + total + ",\"p50\":" + ms(percentile(counts, total, 0.50)) + ",\"p99\":"
                + ms(percentile(counts, total, 0.99)) + ",\"max\":" + ms(total == 0 ? 0 : upper(last)) + "}";
    }

    private static long percentile(long[] counts, long total, double p) {
        long rank = (long) Math.ceil(p * total);
        long seen = 0;
        for (int i = 0; i < counts.length; i++) {
            seen += counts[i];
            if (seen >= rank && counts[i] > 0) {
                return upper(i);
            }
        }
        return 0;
    }

    private static String ms(long micros) {
        return String.format(java.util.Locale.ROOT, "%.3f", micros / 1000.0);
    }
}
