package io.cosched.sample;

import java.util.ArrayList;
import java.util.List;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.ApplicationArguments;
import org.springframework.boot.ApplicationRunner;
import org.springframework.stereotype.Component;
import org.springframework.transaction.support.TransactionTemplate;

/** Accounts 1..{@code sample.accounts} (default 1000), created at start when the table is empty. */
@Component
class SampleData implements ApplicationRunner {

    private final AccountRepository accounts;
    private final TransactionTemplate tx;
    private final int count;

    SampleData(AccountRepository accounts, TransactionTemplate tx, @Value("${sample.accounts:1000}") int count) {
        this.accounts = accounts;
        this.tx = tx;
        this.count = count;
    }

    @Override
    public void run(ApplicationArguments args) {
        tx.executeWithoutResult(status -> {
            if (accounts.count() > 0) {
                return;
            }
            List<Account> all = new ArrayList<>(count);
            for (long id = 1; id <= count; id++) {
                all.add(new Account(id, "owner-" + id));
            }
            accounts.saveAll(all);
        });
    }
}
