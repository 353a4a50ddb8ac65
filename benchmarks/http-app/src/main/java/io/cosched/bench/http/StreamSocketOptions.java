package io.cosched.bench.http;

import io.netty.channel.ChannelOption;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.reactor.netty.NettyServerCustomizer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * {@code bench.stream.send-buffer}: a fixed socket send buffer for the server's connections (benchmarks/stream.sh
 * sets it for the SSE scenario, the same in the MVC app). Left to itself, Linux grows a connection's send buffer up
 * to {@code net.ipv4.tcp_wmem}'s maximum (4 MiB) even while the client's window is closed, so a producer for a slow
 * client writes some 35,000 events into the kernel before any stack sees backpressure, and a thousand such
 * connections run the host into TCP memory pressure: what the window would measure is the kernel, not the stack.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnProperty("bench.stream.send-buffer")
class StreamSocketOptions {

    @Bean
    NettyServerCustomizer streamSendBuffer(@Value("${bench.stream.send-buffer}") int bytes) {
        return server -> server.childOption(ChannelOption.SO_SNDBUF, bytes);
    }
}
