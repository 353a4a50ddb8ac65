package io.cosched.spring.boot.autoconfigure.redis;

import io.cosched.IOManager;
import io.lettuce.core.api.async.RedisAsyncCommands;
import java.util.concurrent.TimeUnit;
import org.springframework.data.redis.core.RedisCallback;
import org.springframework.data.redis.core.StringRedisTemplate;

/** Which thread does what with Redis: what the tests of Redis on the loops compare. */
final class RedisThreads {

    private RedisThreads() {}

    /** The name of loop {@code index}'s thread. */
    static String loopThread(IOManager io, int index) throws Exception {
        return io.eventLoop(index)
                .submit(() -> Thread.currentThread().getName())
                .get(10, TimeUnit.SECONDS);
    }

    /** The thread that completes a reply on the connection the template gives the caller. */
    @SuppressWarnings("unchecked")
    static String replyThread(StringRedisTemplate template) {
        return template.execute((RedisCallback<String>) c -> {
            var stateful = ((RedisAsyncCommands<byte[], byte[]>) c.getNativeConnection()).getStatefulConnection();
            // the callback is in place before the command goes out, so it runs on the thread that reads the reply
            stateful.setAutoFlushCommands(false);
            try {
                var thread = stateful.async()
                        .ping()
                        .thenApply(x -> Thread.currentThread().getName())
                        .toCompletableFuture();
                stateful.flushCommands();
                return thread.get(10, TimeUnit.SECONDS);
            } catch (Exception e) {
                throw new IllegalStateException(e);
            } finally {
                stateful.setAutoFlushCommands(true);
            }
        });
    }
}
