package io.cosched.sample;

import org.springframework.data.jpa.repository.JpaRepository;
import org.springframework.data.jpa.repository.Query;

interface AccountRepository extends JpaRepository<Account, Long> {

    /** Holds the connection in the database for {@code seconds}: PostgreSQL only. */
    @Query(value = "select 1 from pg_sleep(?1)", nativeQuery = true)
    Integer sleepInDatabase(double seconds);
}
