package io.cosched.readme;

import io.cosched.Coroutines;
import io.cosched.spring.web.RunAsCoroutine;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.client.RestClient;

import java.time.Duration;

// The README's quick-start handler, compiled (outside io.cosched.demo, so the demo does not scan it).
// ReadmeSnippetTest checks that the README shows exactly this class body.
@RestController
class QuoteController {
    private final RestClient pricing;

    QuoteController(RestClient.Builder http) {             // Spring Boot's builder: calls go out on the loop
        this.pricing = http.baseUrl("http://127.0.0.1:9090").build();
    }

    @RunAsCoroutine                                        // io.cosched.spring.web.RunAsCoroutine
    @GetMapping("/quote/{sku}")
    String quote(@PathVariable String sku) throws InterruptedException {
        String price = pricing.get().uri("/price/{sku}", sku).retrieve().body(String.class); // parks
        Coroutines.sleep(Duration.ofMillis(20));           // io.cosched.Coroutines: parks, frees the loop
        return sku + "=" + price + " on " + Thread.currentThread(); // ...runnable@cosched-io-1
    }
}
