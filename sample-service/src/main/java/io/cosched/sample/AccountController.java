package io.cosched.sample;

import io.cosched.TaskScope;
import io.cosched.spring.web.RunAsCoroutine;
import jakarta.validation.Valid;
import jakarta.validation.constraints.NotBlank;
import jakarta.validation.constraints.Positive;
import java.security.Principal;
import java.util.List;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.security.core.Authentication;
import org.springframework.security.core.GrantedAuthority;
import org.springframework.security.core.context.SecurityContextHolder;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.client.RestClient;

/** The HTTP API; every handler is a coroutine and is written in blocking style. */
@RestController
@RunAsCoroutine
@RequestMapping("/api")
class AccountController {

    private final AccountService accounts;
    private final RestClient downstream;

    AccountController(
            AccountService accounts,
            RestClient.Builder http,
            @Value("${sample.downstream-url:http://127.0.0.1:9}") String downstreamUrl) {
        this.accounts = accounts;
        this.downstream = http.baseUrl(downstreamUrl).build();
    }

    @GetMapping("/accounts/{id}")
    AccountService.AccountView account(@PathVariable long id) {
        return accounts.find(id);
    }

    @GetMapping("/accounts/{id}/statement")
    AccountService.StatementView statement(@PathVariable long id) {
        return accounts.statement(id);
    }

    /**
     * The account and its statement, read at once (two transactions on two pooled connections of the request's
     * loop); each subtask runs with the caller's security context, so the service's method security applies.
     */
    @GetMapping("/accounts/{id}/overview")
    Overview overview(@PathVariable long id) throws InterruptedException {
        try (TaskScope<Object, Void> scope =
                TaskScope.open(TaskScope.Joiner.awaitAllSuccessfulOrThrow(), c -> c.withName("overview"))) {
            TaskScope.Subtask<AccountService.AccountView> account = scope.fork(() -> accounts.find(id));
            TaskScope.Subtask<AccountService.StatementView> statement = scope.fork(() -> accounts.statement(id));
            scope.join();
            return new Overview(account.get(), statement.get().deposits().size());
        }
    }

    record Overview(AccountService.AccountView account, int deposits) {}

    @PostMapping("/accounts/{id}/deposits")
    AccountService.AccountView deposit(@PathVariable long id, @Valid @RequestBody DepositRequest deposit) {
        return accounts.deposit(id, deposit.cents(), deposit.reference());
    }

    @GetMapping("/accounts/{id}/slow")
    AccountService.AccountView slow(@PathVariable long id, @RequestParam long ms) {
        return accounts.findSlowly(id, ms);
    }

    @GetMapping("/admin/report")
    String report() {
        return accounts.report();
    }

    /** Who the caller is, as blocking code sees it, and where the handler ran. */
    @GetMapping({"/me", "/public/me"})
    Me me(Principal principal) {
        Authentication auth = SecurityContextHolder.getContext().getAuthentication();
        return new Me(
                auth == null ? null : auth.getName(),
                auth == null
                        ? List.of()
                        : auth.getAuthorities().stream()
                                .map(GrantedAuthority::getAuthority)
                                .sorted()
                                .toList(),
                principal == null ? null : principal.getName(),
                Thread.currentThread().toString());
    }

    /** A call to the downstream service through Boot's RestClient. */
    @GetMapping("/quote")
    String quote() {
        return downstream.get().uri("/").retrieve().body(String.class);
    }

    record DepositRequest(@Positive long cents, @NotBlank String reference) {}

    record Me(String name, List<String> authorities, String principal, String thread) {}
}
