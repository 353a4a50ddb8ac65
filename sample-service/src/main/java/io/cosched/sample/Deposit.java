package io.cosched.sample;

import jakarta.persistence.Entity;
import jakarta.persistence.FetchType;
import jakarta.persistence.GeneratedValue;
import jakarta.persistence.GenerationType;
import jakarta.persistence.Id;
import jakarta.persistence.ManyToOne;
import jakarta.persistence.Table;

/** One deposit into an account. */
@Entity
@Table(name = "sample_deposits")
public class Deposit {

    @Id
    @GeneratedValue(strategy = GenerationType.IDENTITY)
    private Long id;

    @ManyToOne(fetch = FetchType.LAZY, optional = false)
    private Account account;

    private long cents;

    private String reference;

    protected Deposit() {}

    Deposit(Account account, long cents, String reference) {
        this.account = account;
        this.cents = cents;
        this.reference = reference;
    }

    public Long getId() {
        return id;
    }

    public long getCents() {
        return cents;
    }

    public String getReference() {
        return reference;
    }
}
