package io.cosched.readme;

// The README's quick-start handler, compiled (outside io.cosched.demo, so the demo does not scan it).
// ReadmeSnippetTest checks that the README shows exactly this file from its first import on.

import io.cosched.Coroutines;
import io.cosched.spring.web.RunAsCoroutine;
import java.time.Duration;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.client.RestClient;

@RestController
class QuoteController {
    private final RestClient pricing;

    QuoteController(RestClient.Builder http) { // Spring Boot's builder: calls go out on the loop
        this.pricing = http.baseUrl("http://127.0.0.1:9090").build();
    }

    @RunAsCoroutine // run this handler as a coroutine
    @GetMapping("/quote/{sku}")
    String quote(@PathVariable String sku) throws InterruptedException {
        String price = pricing.get().uri("/price/{sku}", sku).retrieve().body(String.class); // parks
        Coroutines.sleep(Duration.ofMillis(20)); // parks on the loop's timer, frees the loop
        return sku + "=" + price + " on " + Thread.currentThread(); // ...runnable@cosched-io-1
    }
}
