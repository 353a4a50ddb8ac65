package io.cosched.sample;

import java.util.List;
import org.springframework.data.domain.PageRequest;
import org.springframework.data.domain.Sort;
import org.springframework.security.access.prepost.PreAuthorize;
import org.springframework.security.core.Authentication;
import org.springframework.security.core.context.SecurityContextHolder;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

/**
 * The accounts, in blocking style: JPA in transactions, access decided by method security from
 * {@link SecurityContextHolder}, as in a Spring MVC application.
 */
@Service
public class AccountService {

    private final AccountRepository accounts;
    private final DepositRepository deposits;
    private final SlowDatabase slow;

    AccountService(AccountRepository accounts, DepositRepository deposits, SlowDatabase slow) {
        this.accounts = accounts;
        this.deposits = deposits;
        this.slow = slow;
    }

    @PreAuthorize("isAuthenticated()")
    @Transactional(readOnly = true)
    public AccountView find(long id) {
        slow.hold(accounts);
        return AccountView.of(accounts.findById(id).orElseThrow(() -> new AccountNotFoundException(id)));
    }

    /** The account with its deposits, loaded lazily inside the transaction. */
    @PreAuthorize("isAuthenticated()")
    @Transactional(readOnly = true)
    public StatementView statement(long id) {
        slow.hold(accounts);
        Account a = accounts.findById(id).orElseThrow(() -> new AccountNotFoundException(id));
        List<StatementView.Line> lines = a.getDeposits().stream()
                .map(d -> new StatementView.Line(d.getCents(), d.getReference()))
                .toList();
        return new StatementView(AccountView.of(a), lines);
    }

    @PreAuthorize("hasRole('ADMIN')")
    @Transactional
    public AccountView deposit(long id, long cents, String reference) {
        slow.hold(accounts);
        Account a = accounts.findById(id).orElseThrow(() -> new AccountNotFoundException(id));
        a.credit(cents);
        deposits.save(new Deposit(a, cents, reference));
        if (reference.startsWith("rollback")) {
            throw new DepositRejectedException(reference); // after the writes: the transaction rolls them back
        }
        return AccountView.of(accounts.saveAndFlush(a));
    }

    /** One page of accounts by id, {@code size} at a time, for exports. */
    @PreAuthorize("hasRole('ADMIN')")
    @Transactional(readOnly = true)
    public List<AccountView> page(int page, int size) {
        return accounts.findAll(PageRequest.of(page, size, Sort.by("id")))
                .map(AccountView::of)
                .getContent();
    }

    @PreAuthorize("hasRole('ADMIN')")
    @Transactional(readOnly = true)
    public String report() {
        Authentication who = SecurityContextHolder.getContext().getAuthentication();
        return accounts.count() + " accounts, report for " + who.getName();
    }

    /** Reads an account, then holds the connection in the database for {@code millis}: PostgreSQL only. */
    @PreAuthorize("isAuthenticated()")
    @Transactional(readOnly = true)
    public AccountView findSlowly(long id, long millis) {
        Account a = accounts.findById(id).orElseThrow(() -> new AccountNotFoundException(id));
        accounts.sleepInDatabase(millis / 1000.0);
        return AccountView.of(a);
    }

    public record AccountView(long id, String owner, long balanceCents, String lastModifiedBy) {
        static AccountView of(Account a) {
            return new AccountView(a.getId(), a.getOwner(), a.getBalanceCents(), a.getLastModifiedBy());
        }
    }

    public record StatementView(AccountView account, List<Line> deposits) {
        public record Line(long cents, String reference) {}
    }

    public static final class AccountNotFoundException extends RuntimeException {
        AccountNotFoundException(long id) {
            super("no account " + id);
        }
    }

    public static final class DepositRejectedException extends RuntimeException {
        DepositRejectedException(String reference) {
            super("deposit " + reference + " rejected");
        }
    }
}
