package io.cosched.spring.boot.autoconfigure.redis;

import io.cosched.IOManager;
import io.cosched.spring.data.redis.LoopLettuceConnectionFactory;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * Puts a {@link LettuceConnectionFactory} bean on cosched's event loops: once Spring Boot (or the application)
 * has made it, and before it starts, it is replaced by a {@link LoopLettuceConnectionFactory} with its
 * configuration and settings. One that cannot be (Redis Cluster, static master/replica, a subclass, started
 * already) is left as it is, and the log says why at INFO.
 */
final class LoopLettuceConnectionFactoryPostProcessor implements BeanPostProcessor {

    private static final Log LOG = LogFactory.getLog(LoopLettuceConnectionFactoryPostProcessor.class);

    private final ObjectProvider<IOManager> io;

    LoopLettuceConnectionFactoryPostProcessor(ObjectProvider<IOManager> io) {
        this.io = io;
    }

    /** Before initialization: the factory starts in {@code afterPropertiesSet}, and the replacement must be what starts. */
    @Override
    public Object postProcessBeforeInitialization(Object bean, String beanName) {
        if (!(bean instanceof LettuceConnectionFactory factory) || bean instanceof LoopLettuceConnectionFactory) {
            return bean;
        }
        IOManager manager = io.getIfUnique();
        String reason = manager == null
                ? "there is no single IOManager bean"
                : LoopLettuceConnectionFactory.unsupportedReason(factory, manager);
        if (reason != null || manager == null) {
            LOG.info("Redis connection factory '" + beanName + "' is not on cosched's event loops: " + reason
                    + ". Its replies are read by Lettuce's own threads, which then resume the coroutines waiting for "
                    + "them (docs/io.md)");
            return bean;
        }
        LoopLettuceConnectionFactory loop = LoopLettuceConnectionFactory.from(factory, manager);
        LOG.debug("Redis connection factory '" + beanName + "' is " + loop);
        return loop;
    }
}
