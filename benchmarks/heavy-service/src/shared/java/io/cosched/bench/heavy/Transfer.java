package io.cosched.bench.heavy;

import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;

/** A transfer of an account, read through Spring Data JPA (Hibernate). */
@Entity
@Table(name = "heavy_transfer")
class Transfer {

    @Id
    private Long id;
    private long accountId;
    private long cents;
    private String reference;

    protected Transfer() {
    }

    Long getId() {
        return id;
    }

    long getAccountId() {
        return accountId;
    }

    long getCents() {
        return cents;
    }

    String getReference() {
        return reference;
    }
}
