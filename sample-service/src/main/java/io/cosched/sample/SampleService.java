package io.cosched.sample;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.data.jpa.repository.config.EnableJpaAuditing;

/**
 * An accounts service written as a team coming from Spring MVC and virtual threads would write it:
 * Spring Data JPA behind a {@code @Transactional} service guarded by {@code @PreAuthorize}, HTTP basic
 * and JWT bearer authentication, Bean Validation, Actuator with Prometheus, a downstream call through
 * Boot's {@code RestClient}, and every handler a coroutine ({@code @RunAsCoroutine}). It runs on H2 by
 * default and on PostgreSQL with {@code --spring.datasource.url=jdbc:postgresql://...}.
 */
@SpringBootApplication
@EnableJpaAuditing
public class SampleService {

    public static void main(String[] args) {
        SpringApplication.run(SampleService.class, args);
    }
}
