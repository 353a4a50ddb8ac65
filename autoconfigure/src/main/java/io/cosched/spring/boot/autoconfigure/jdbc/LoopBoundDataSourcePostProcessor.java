package io.cosched.spring.boot.autoconfigure.jdbc;

import com.zaxxer.hikari.HikariDataSource;
import io.cosched.IOManager;
import io.cosched.spring.jdbc.LoopBoundDataSource;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanPostProcessor;

/**
 * Puts a HikariCP {@code DataSource} bean for PostgreSQL on cosched's event loops: once Spring Boot
 * (or the application) has configured it, it is replaced by a {@link LoopBoundDataSource} made from
 * its configuration. One that cannot be (started already, a data source class instead of a URL, a
 * socket factory of its own) is left as it is, on JDK sockets, and the log says why.
 */
final class LoopBoundDataSourcePostProcessor implements BeanPostProcessor {

    private static final Log LOG = LogFactory.getLog(LoopBoundDataSourcePostProcessor.class);

    private final ObjectProvider<IOManager> io;

    LoopBoundDataSourcePostProcessor(ObjectProvider<IOManager> io) {
        this.io = io;
    }

    @Override
    public Object postProcessAfterInitialization(Object bean, String beanName) {
        if (!(bean instanceof HikariDataSource hikari) || bean instanceof LoopBoundDataSource) {
            return bean;
        }
        String url = hikari.getJdbcUrl();
        boolean postgres = url != null && url.startsWith("jdbc:postgresql:")
                || "org.postgresql.ds.PGSimpleDataSource".equals(hikari.getDataSourceClassName());
        if (!postgres) {
            return bean; // another database: nothing cosched can do for it yet
        }
        String reason = hikari.getHikariPoolMXBean() != null ? "its pool has started already"
                : LoopBoundDataSource.unsupportedReason(hikari);
        IOManager manager = io.getIfUnique();
        if (reason == null && manager == null) {
            reason = "there is no single IOManager bean";
        }
        if (reason != null) {
            LOG.info("DataSource '" + beanName + "' stays on JDK sockets: " + reason
                    + " (cosched puts a HikariCP pool for PostgreSQL configured by URL on its event loops)");
            return bean;
        }
        LoopBoundDataSource bound = new LoopBoundDataSource(hikari, manager);
        LOG.debug("DataSource '" + beanName + "' is " + bound);
        return bound;
    }
}
