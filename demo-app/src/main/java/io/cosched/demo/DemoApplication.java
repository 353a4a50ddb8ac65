package io.cosched.demo;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;

/**
 * The cosched demo: an orders and quotes service written in plain blocking style (JDBC, a blocking
 * HTTP client, sleep-and-retry) whose handlers run as coroutines on WebFlux's epoll event loops,
 * next to the same quote logic written reactively, and a live dashboard of the schedulers at
 * {@code /}.
 */
@SpringBootApplication
@EnableConfigurationProperties(DemoProperties.class)
public class DemoApplication {

    public static void main(String[] args) {
        SpringApplication.run(DemoApplication.class, args);
    }
}
