package io.cosched.bench.heavy;

import org.springframework.data.jpa.repository.JpaRepository;

import java.util.List;

/** Spring Data JPA's repository. */
interface TransferRepository extends JpaRepository<Transfer, Long> {

    List<Transfer> findTop5ByAccountIdOrderByIdDesc(long accountId);
}
