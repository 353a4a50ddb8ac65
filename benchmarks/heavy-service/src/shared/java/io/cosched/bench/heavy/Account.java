package io.cosched.bench.heavy;

import org.springframework.data.annotation.Id;
import org.springframework.data.relational.core.mapping.Table;

/** An account, read through Spring Data JDBC. */
@Table("heavy_account")
record Account(@Id Long id, String owner, long balanceCents) {
}
