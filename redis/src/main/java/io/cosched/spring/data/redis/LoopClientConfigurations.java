package io.cosched.spring.data.redis;

import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.resource.ClientResources;
import org.apache.commons.pool2.impl.GenericObjectPoolConfig;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration.LettuceClientConfigurationBuilder;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration.LettuceSslClientConfigurationBuilder;
import org.springframework.data.redis.connection.lettuce.LettucePoolingClientConfiguration;

/** A loop's copy of a client configuration: the same in everything but its client resources and connection pool sizes. */
final class LoopClientConfigurations {

    private LoopClientConfigurations() {}

    static LettuceClientConfiguration onLoop(
            LettuceClientConfiguration base, ClientResources resources, int loops, int loopIndex) {
        LettuceClientConfigurationBuilder b = base instanceof LettucePoolingClientConfiguration pooling
                ? Pooling.builder(pooling, loops, loopIndex)
                : LettuceClientConfiguration.builder();
        if (base.isUseSsl()) {
            LettuceSslClientConfigurationBuilder ssl = b.useSsl().verifyPeer(base.getVerifyMode());
            if (base.isStartTls()) {
                ssl.startTls();
            }
            b = ssl.and();
        }
        base.getClientOptions().ifPresent(b::clientOptions);
        base.getReadFrom().ifPresent(b::readFrom);
        base.getRedisCredentialsProviderFactory().ifPresent(b::redisCredentialsProviderFactory);
        base.getClientName().ifPresent(b::clientName);
        return b.commandTimeout(base.getCommandTimeout())
                .shutdownTimeout(base.getShutdownTimeout())
                .shutdownQuietPeriod(base.getShutdownQuietPeriod())
                .clientResources(resources)
                .build();
    }

    /** {@code loop}'s part of {@code total} over {@code loops}, the first ones one larger; a figure that is not positive stays as it is. */
    static int share(int total, int loops, int loopIndex) {
        if (total <= 0) {
            return total;
        }
        return Math.max(1, total / loops + (loopIndex < total % loops ? 1 : 0));
    }

    /** Apart, so that commons-pool2 is loaded only by applications that pool. */
    private static final class Pooling {

        static LettuceClientConfigurationBuilder builder(
                LettucePoolingClientConfiguration base, int loops, int loopIndex) {
            GenericObjectPoolConfig<StatefulConnection<?, ?>> pool =
                    base.getPoolConfig().clone();
            pool.setMaxTotal(share(pool.getMaxTotal(), loops, loopIndex));
            pool.setMaxIdle(share(pool.getMaxIdle(), loops, loopIndex));
            pool.setMinIdle(Math.min(
                    pool.getMinIdle() <= 0 ? pool.getMinIdle() : share(pool.getMinIdle(), loops, loopIndex),
                    pool.getMaxIdle() < 0 ? Integer.MAX_VALUE : pool.getMaxIdle()));
            return LettucePoolingClientConfiguration.builder().poolConfig(pool);
        }
    }
}
