package io.cosched.sample;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.EntityListeners;
import jakarta.persistence.FetchType;
import jakarta.persistence.Id;
import jakarta.persistence.OneToMany;
import jakarta.persistence.OrderBy;
import jakarta.persistence.Table;
import jakarta.persistence.Version;
import java.util.ArrayList;
import java.util.List;
import org.springframework.data.annotation.LastModifiedBy;
import org.springframework.data.jpa.domain.support.AuditingEntityListener;

/** An account and its deposits (loaded lazily); who changed it last is filled in by Spring Data's auditing. */
@Entity
@Table(name = "sample_accounts")
@EntityListeners(AuditingEntityListener.class)
public class Account {

    @Id
    private Long id;

    @Column(nullable = false)
    private String owner;

    private long balanceCents;

    @LastModifiedBy
    private String lastModifiedBy;

    @Version
    private long version;

    @OneToMany(mappedBy = "account", fetch = FetchType.LAZY)
    @OrderBy("id")
    private List<Deposit> deposits = new ArrayList<>();

    protected Account() {}

    public Account(long id, String owner) {
        this.id = id;
        this.owner = owner;
    }

    public Long getId() {
        return id;
    }

    public String getOwner() {
        return owner;
    }

    public long getBalanceCents() {
        return balanceCents;
    }

    public String getLastModifiedBy() {
        return lastModifiedBy;
    }

    public List<Deposit> getDeposits() {
        return deposits;
    }

    void credit(long cents) {
        balanceCents += cents;
    }
}
