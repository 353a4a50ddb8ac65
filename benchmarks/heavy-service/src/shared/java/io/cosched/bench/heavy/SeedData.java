package io.cosched.bench.heavy;

import org.springframework.boot.ApplicationArguments;
import org.springframework.boot.ApplicationRunner;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.stereotype.Component;

/** The tables and 1000 accounts with 10 transfers each, made once when the database has none. */
@Component
class SeedData implements ApplicationRunner {

    private final JdbcClient jdbc;

    SeedData(JdbcClient jdbc) {
        this.jdbc = jdbc;
    }

    @Override
    public void run(ApplicationArguments args) {
        jdbc.sql("create table if not exists heavy_account (id bigint primary key, owner varchar(64) not null,"
                + " balance_cents bigint not null)").update();
        jdbc.sql("create table if not exists heavy_transfer (id bigint primary key, account_id bigint not null,"
                + " cents bigint not null, reference varchar(64) not null)").update();
        jdbc.sql("create index if not exists heavy_transfer_account on heavy_transfer (account_id, id)").update();
        if (jdbc.sql("select count(*) from heavy_account").query(Long.class).single() > 0) {
            return;
        }
        for (long a = 1; a <= 1000; a++) {
            jdbc.sql("insert into heavy_account (id, owner, balance_cents) values (?, ?, ?)")
                    .params(a, "owner-" + a, a * 100).update();
            for (long t = 0; t < 10; t++) {
                jdbc.sql("insert into heavy_transfer (id, account_id, cents, reference) values (?, ?, ?, ?)")
                        .params(a * 100 + t, a, t * 10 + 1, "ref-" + a + "-" + t).update();
            }
        }
    }
}
