package io.cosched.spring.boot.autoconfigure.redis;

import io.cosched.IOManager;
import io.cosched.spring.boot.autoconfigure.CoschedAutoConfiguration;
import io.cosched.spring.data.redis.LoopLettuceConnectionFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * Redis through Spring Data Redis and Lettuce on cosched's event loops: the application's
 * {@link LettuceConnectionFactory} (Spring Boot's, from {@code spring.data.redis.*}, or a plain one of its own)
 * becomes a {@link LoopLettuceConnectionFactory} before it starts, so that a coroutine's command is answered on
 * its own loop. Off with {@code cosched.redis.enabled=false}.
 */
@AutoConfiguration(after = CoschedAutoConfiguration.class)
@ConditionalOnClass({LettuceConnectionFactory.class, LoopLettuceConnectionFactory.class})
@ConditionalOnBean(IOManager.class)
@ConditionalOnBooleanProperty(name = "cosched.enabled", matchIfMissing = true)
@ConditionalOnBooleanProperty(name = "cosched.redis.enabled", matchIfMissing = true)
@EnableConfigurationProperties(CoschedRedisProperties.class)
public final class CoschedRedisAutoConfiguration {

    @Bean
    static LoopLettuceConnectionFactoryPostProcessor coschedLoopLettuceConnectionFactoryPostProcessor(
            ObjectProvider<IOManager> io) {
        return new LoopLettuceConnectionFactoryPostProcessor(io);
    }
}
