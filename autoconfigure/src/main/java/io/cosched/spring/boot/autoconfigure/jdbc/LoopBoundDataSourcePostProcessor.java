package io.cosched.spring.boot.autoconfigure.jdbc;

import com.zaxxer.hikari.HikariDataSource;
import io.cosched.IOManager;
import io.cosched.jdbc.LoopBoundDataSource;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.core.Ordered;

/**
 * Puts a HikariCP {@code DataSource} bean for PostgreSQL, MariaDB or MySQL on cosched's event loops: once Spring Boot
 * (or the application) has configured it, it is replaced by a {@link LoopBoundDataSource} made from
 * its configuration. One that cannot be (another database, started already, a data source class
 * instead of a URL, a socket factory of its own) is left as it is, and the log says why at INFO.
 *
 * <p>It runs before the post-processors that wrap a DataSource (JDBC tracing and logging decorators): they wrap the
 * loops' data source then, where run first they would hide the Hikari one from it.
 */
final class LoopBoundDataSourcePostProcessor implements BeanPostProcessor, Ordered {

    private static final Log LOG = LogFactory.getLog(LoopBoundDataSourcePostProcessor.class);

    private final ObjectProvider<IOManager> io;
    private final ObjectProvider<CoschedJdbcProperties> properties;

    LoopBoundDataSourcePostProcessor(ObjectProvider<IOManager> io, ObjectProvider<CoschedJdbcProperties> properties) {
        this.io = io;
        this.properties = properties;
    }

    @Override
    public int getOrder() {
        return Ordered.HIGHEST_PRECEDENCE;
    }

    @Override
    public Object postProcessAfterInitialization(Object bean, String beanName) {
        if (!(bean instanceof HikariDataSource hikari) || bean instanceof LoopBoundDataSource) {
            return bean;
        }
        String reason = hikari.getHikariPoolMXBean() != null
                ? "its HikariCP pool has started already"
                : LoopBoundDataSource.unsupportedReason(hikari);
        IOManager manager = io.getIfUnique();
        if (reason != null || manager == null) {
            LOG.info("DataSource '" + beanName + "' is not on cosched's event loops: "
                    + (reason != null ? reason : "there is no single IOManager bean") + ". Its connections "
                    + "use the JDK's sockets, whose waits a JDK poller thread ends (cosched puts a HikariCP pool for "
                    + "PostgreSQL, MariaDB or MySQL configured by URL on its event loops; docs/io.md)");
            return bean;
        }
        // the jdbc auto-configuration that makes this post-processor binds the properties too
        LoopBoundDataSource bound =
                new LoopBoundDataSource(hikari, manager, properties.getObject().getCancelStatementsAfter());
        LOG.debug("DataSource '" + beanName + "' is " + bound);
        return bound;
    }
}
