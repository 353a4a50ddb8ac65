package io.cosched.spring.boot.autoconfigure.jdbc;

import io.cosched.jdbc.LoopBoundDataSource;
import io.cosched.spring.boot.autoconfigure.CoschedAutoConfiguration;
import jakarta.persistence.Entity;
import jakarta.persistence.EntityManager;
import jakarta.persistence.Table;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import javax.sql.DataSource;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.data.jdbc.autoconfigure.DataJdbcRepositoriesAutoConfiguration;
import org.springframework.boot.data.jpa.autoconfigure.DataJpaRepositoriesAutoConfiguration;
import org.springframework.boot.hibernate.autoconfigure.HibernateJpaAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.JdbcClientAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.JdbcTemplateAutoConfiguration;
import org.springframework.boot.persistence.autoconfigure.EntityScan;
import org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.ComponentScan;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.FilterType;
import org.springframework.core.Ordered;
import org.springframework.data.annotation.Id;
import org.springframework.data.jdbc.repository.config.EnableJdbcRepositories;
import org.springframework.data.jpa.repository.JpaRepository;
import org.springframework.data.jpa.repository.config.EnableJpaRepositories;
import org.springframework.data.repository.ListCrudRepository;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.DelegatingDataSource;
import org.springframework.transaction.annotation.Propagation;
import org.springframework.transaction.annotation.Transactional;

/**
 * The two applications {@link SpringIdiomsContract} runs Spring's data-access idioms in, as teams write them: one on
 * plain JDBC (JdbcTemplate, JdbcClient, Spring Data JDBC, {@code DataSourceTransactionManager}), one on JPA
 * (Hibernate, Spring Data JPA, {@code JpaTransactionManager}), each on Spring Boot's DataSource from
 * {@code spring.datasource.*}, which cosched puts on its loops. Both share the tables {@code idiom_item} (rows
 * 1 to {@link #ITEMS}) and {@code idiom_log}.
 */
final class IdiomApps {

    static final int ITEMS = 100;

    private IdiomApps() {}

    /** The plain-JDBC application. */
    @Configuration(proxyBeanMethods = false)
    @ImportAutoConfiguration({
        CoschedAutoConfiguration.class,
        CoschedJdbcAutoConfiguration.class,
        DataSourceAutoConfiguration.class,
        DataSourceTransactionManagerAutoConfiguration.class,
        TransactionAutoConfiguration.class,
        JdbcTemplateAutoConfiguration.class,
        JdbcClientAutoConfiguration.class,
        DataJdbcRepositoriesAutoConfiguration.class
    })
    @EnableJdbcRepositories(
            basePackageClasses = IdiomApps.class,
            considerNestedRepositories = true,
            includeFilters = @ComponentScan.Filter(type = FilterType.ASSIGNABLE_TYPE, classes = ItemRows.class))
    static class Jdbc {

        @Bean
        JdbcIdioms jdbcIdioms(JdbcClient jdbc) {
            return new JdbcIdioms(jdbc);
        }

        @Bean
        static BeanPostProcessor arrivalOrder() {
            return ArrivalOrder.WRAPPER;
        }
    }

    /** The JPA application. */
    @Configuration(proxyBeanMethods = false)
    @ImportAutoConfiguration({
        CoschedAutoConfiguration.class,
        CoschedJdbcAutoConfiguration.class,
        DataSourceAutoConfiguration.class,
        TransactionAutoConfiguration.class,
        JdbcTemplateAutoConfiguration.class,
        JdbcClientAutoConfiguration.class,
        HibernateJpaAutoConfiguration.class,
        DataJpaRepositoriesAutoConfiguration.class
    })
    @EntityScan(basePackageClasses = IdiomApps.class)
    @EnableJpaRepositories(
            basePackageClasses = IdiomApps.class,
            considerNestedRepositories = true,
            includeFilters = @ComponentScan.Filter(type = FilterType.ASSIGNABLE_TYPE, classes = JpaItems.class))
    static class Jpa {

        @Bean
        JpaIdioms jpaIdioms(EntityManager entityManager, JpaItems items, JdbcTemplate jdbc) {
            return new JpaIdioms(entityManager, items, jdbc);
        }

        @Bean
        static BeanPostProcessor arrivalOrder() {
            return ArrivalOrder.WRAPPER;
        }
    }

    /**
     * The application's DataSource as Spring sees it: cosched's, numbering each borrower as it asks and as it is
     * served, so that a test can tell whether anyone was overtaken in the line. It wraps the DataSource bean after
     * cosched has put it on the loops, as a JDBC tracing decorator would.
     */
    static final class ArrivalOrder extends DelegatingDataSource {

        static final BeanPostProcessor WRAPPER = new Wrapper();

        private static final class Wrapper implements BeanPostProcessor, Ordered {
            @Override
            public Object postProcessAfterInitialization(Object bean, String beanName) {
                return bean instanceof LoopBoundDataSource bound ? new ArrivalOrder(bound) : bean;
            }

            @Override
            public int getOrder() {
                return Ordered.LOWEST_PRECEDENCE;
            }
        }

        private final AtomicLong asked = new AtomicLong();
        private final List<long[]> served = new ArrayList<>(); // {asked, served in order}; guarded by itself

        ArrivalOrder(DataSource target) {
            super(target);
        }

        @Override
        public Connection getConnection() throws SQLException {
            long ticket = asked.getAndIncrement();
            Connection c = super.getConnection();
            synchronized (served) {
                served.add(new long[] {ticket});
            }
            return c;
        }

        /** Forgets the borrows so far. */
        void reset() {
            synchronized (served) {
                served.clear();
                asked.set(0);
            }
        }

        /** How many borrowers, at most, one borrower saw served before it that had asked after it. */
        int mostOvertaken() {
            long[] askedInServedOrder;
            synchronized (served) {
                askedInServedOrder = served.stream().mapToLong(t -> t[0]).toArray();
            }
            int n = (int) asked.get();
            int[] tree = new int[n + 1]; // Fenwick tree over tickets: which have been served
            int most = 0;
            for (int i = 0; i < askedInServedOrder.length; i++) {
                int ticket = (int) askedInServedOrder[i];
                int servedBeforeAskedBefore = 0;
                for (int k = ticket; k > 0; k -= k & -k) {
                    servedBeforeAskedBefore += tree[k];
                }
                most = Math.max(most, i - servedBeforeAskedBefore);
                for (int k = ticket + 1; k <= n; k += k & -k) {
                    tree[k]++;
                }
            }
            return most;
        }
    }

    /** A row of {@code idiom_item}, for Spring Data JDBC. */
    @org.springframework.data.relational.core.mapping.Table("idiom_item")
    record ItemRow(@Id long id, String name, int qty) {}

    interface ItemRows extends ListCrudRepository<ItemRow, Long> {

        Stream<ItemRow> findByIdLessThan(long id);
    }

    /** The idioms that need a transactional proxy, on plain JDBC. */
    static class JdbcIdioms {

        private final JdbcClient jdbc;

        JdbcIdioms(JdbcClient jdbc) {
            this.jdbc = jdbc;
        }

        @Transactional
        public void commit(long item, long logId) {
            jdbc.sql("UPDATE idiom_item SET qty = qty + 1 WHERE id = ?")
                    .param(item)
                    .update();
            jdbc.sql("INSERT INTO idiom_log (id, note) VALUES (?, 'committed')")
                    .param(logId)
                    .update();
        }

        @Transactional
        public void rollback(long logId) {
            jdbc.sql("INSERT INTO idiom_log (id, note) VALUES (?, 'rolled back')")
                    .param(logId)
                    .update();
            throw new Expected();
        }

        /** An inner transaction on a savepoint that rolls back, in an outer one that commits. */
        @Transactional
        public void nested(JdbcIdioms self, long logId, long innerLogId) {
            jdbc.sql("INSERT INTO idiom_log (id, note) VALUES (?, 'committed')")
                    .param(logId)
                    .update();
            try {
                self.inner(innerLogId);
            } catch (Expected e) {
                // the savepoint is rolled back, the outer transaction goes on
            }
        }

        @Transactional(propagation = Propagation.NESTED)
        public void inner(long logId) {
            jdbc.sql("INSERT INTO idiom_log (id, note) VALUES (?, 'rolled back')")
                    .param(logId)
                    .update();
            throw new Expected();
        }

        /** A stream read in a transaction: closing it must leave the transaction's connection to the transaction. */
        @Transactional
        public long streamThenWrite(long logId) {
            long rows;
            try (Stream<Integer> qty =
                    jdbc.sql("SELECT qty FROM idiom_item WHERE id < 6").query(Integer.class).stream()) {
                rows = qty.count();
            }
            jdbc.sql("INSERT INTO idiom_log (id, note) VALUES (?, 'committed')")
                    .param(logId)
                    .update();
            return rows;
        }
    }

    /** A row of {@code idiom_item}, for JPA. */
    @Entity
    @Table(name = "idiom_item")
    static class JpaItem {
        @jakarta.persistence.Id
        Long id;

        String name;
        int qty;

        protected JpaItem() {}
    }

    interface JpaItems extends JpaRepository<JpaItem, Long> {

        Stream<JpaItem> findByIdLessThan(long id);
    }

    /** The idioms that need a transactional proxy, on JPA. */
    static class JpaIdioms {

        private final EntityManager entityManager;
        private final JpaItems items;
        private final JdbcTemplate jdbc;

        JpaIdioms(EntityManager entityManager, JpaItems items, JdbcTemplate jdbc) {
            this.entityManager = entityManager;
            this.items = items;
            this.jdbc = jdbc;
        }

        @Transactional
        public void entityManagerUpdate(long item) {
            JpaItem found = entityManager.find(JpaItem.class, item);
            found.qty++;
        }

        @Transactional
        public void repositoryUpdate(long item) {
            JpaItem found = items.findById(item).orElseThrow();
            found.qty++;
            items.save(found);
        }

        @Transactional
        public void rollback(long item) {
            JpaItem found = entityManager.find(JpaItem.class, item);
            found.qty = -1;
            entityManager.flush();
            throw new Expected();
        }

        @Transactional(readOnly = true)
        public long stream() {
            try (Stream<JpaItem> found = items.findByIdLessThan(6)) {
                return found.count();
            }
        }

        /** JDBC in a JPA transaction: the stream's close must leave the transaction's connection to it. */
        @Transactional
        public long jdbcStreamInJpaTransaction(long item) {
            long rows;
            try (Stream<Integer> qty =
                    jdbc.queryForStream("SELECT qty FROM idiom_item WHERE id < 6", (rs, i) -> rs.getInt(1))) {
                rows = qty.count();
            }
            entityManager.find(JpaItem.class, item).qty++;
            return rows;
        }
    }

    /** Thrown on purpose, to roll a transaction back. */
    static final class Expected extends RuntimeException {
        Expected() {
            super("rolled back on purpose", null, false, false);
        }
    }
}
