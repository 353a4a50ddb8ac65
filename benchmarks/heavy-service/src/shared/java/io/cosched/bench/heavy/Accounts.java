package io.cosched.bench.heavy;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.http.HttpStatus;
import org.springframework.security.access.prepost.PreAuthorize;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.web.client.RestClient;
import org.springframework.web.server.ResponseStatusException;

import java.util.List;

/** What the API does, in blocking style, each method guarded by method security on the token's scopes. */
@Service
class Accounts {

    private final AccountRepository accounts;
    private final TransferRepository transfers;
    private final RestClient quotes;

    Accounts(AccountRepository accounts, TransferRepository transfers, RestClient.Builder http,
            @Value("${heavy.quote-url}") String quoteUrl) {
        this.accounts = accounts;
        this.transfers = transfers;
        this.quotes = http.baseUrl(quoteUrl).build();
    }

    /** One row through Spring Data JDBC: one pooled connection, one query, no transaction of its own. */
    @PreAuthorize("hasAuthority('SCOPE_accounts:read')")
    Account account(long id) {
        return accounts.findById(id).orElseThrow(() -> new ResponseStatusException(HttpStatus.NOT_FOUND, "account " + id));
    }

    /** The last transfers through Spring Data JPA, in a read-only transaction. */
    @PreAuthorize("hasAuthority('SCOPE_accounts:read')")
    @Transactional(readOnly = true)
    List<TransferView> transfers(long id) {
        return transfers.findTop5ByAccountIdOrderByIdDesc(id).stream()
                .map(t -> new TransferView(t.getId(), t.getCents(), t.getReference())).toList();
    }

    /** A call to the quote service (the stub, 5 ms), through Boot's RestClient. */
    @PreAuthorize("hasAuthority('SCOPE_quotes:read')")
    String quote() {
        return quotes.get().uri("/quote").retrieve().body(String.class);
    }

    record TransferView(long id, long cents, String reference) {
    }
}
