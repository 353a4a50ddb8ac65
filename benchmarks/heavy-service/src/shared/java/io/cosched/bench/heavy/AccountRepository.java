package io.cosched.bench.heavy;

import org.springframework.data.repository.ListCrudRepository;

/** Spring Data JDBC's repository (the entity's {@code @Table} assigns it to JDBC, not JPA). */
interface AccountRepository extends ListCrudRepository<Account, Long> {
}
