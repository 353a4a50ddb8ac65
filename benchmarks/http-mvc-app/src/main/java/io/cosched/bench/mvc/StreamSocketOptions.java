package io.cosched.bench.mvc;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.tomcat.TomcatConnectorCustomizer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * {@code bench.stream.send-buffer}: a fixed socket send buffer for Tomcat's connections, as the WebFlux app sets for
 * Reactor Netty's (see io.cosched.bench.http.StreamSocketOptions there for why the SSE scenario needs one).
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnProperty("bench.stream.send-buffer")
class StreamSocketOptions {

    @Bean
    TomcatConnectorCustomizer streamSendBuffer(@Value("${bench.stream.send-buffer}") int bytes) {
        return connector -> connector.setProperty("socket.txBufSize", Integer.toString(bytes));
    }
}
