package io.cosched.bench.heavy;

import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;

import java.util.List;

/**
 * The HTTP API, blocking handlers without any annotation of cosched's: on WebFlux cosched runs them as
 * coroutines ({@code cosched.web.mode=all}) or Spring's virtual threads do; on Spring MVC Tomcat's virtual threads.
 */
@RestController
@RequestMapping("/api")
class Api {

    private final Accounts accounts;

    Api(Accounts accounts) {
        this.accounts = accounts;
    }

    @GetMapping("/accounts/{id}")
    Account account(@PathVariable long id) {
        return accounts.account(id);
    }

    @GetMapping("/accounts/{id}/transfers")
    List<Accounts.TransferView> transfers(@PathVariable long id) {
        return accounts.transfers(id);
    }

    @GetMapping("/quote")
    String quote() {
        return accounts.quote();
    }
}
