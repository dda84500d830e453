package io.github.distlock.aop;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import io.github.distlock.LockContext;
import io.github.distlock.annotation.DistributedLock;
import io.github.distlock.autoconfigure.DistributedLockAutoConfiguration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.aop.support.AopUtils;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.annotation.EnableTransactionManagement;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.transaction.support.AbstractPlatformTransactionManager;
import org.springframework.transaction.support.DefaultTransactionStatus;
import org.springframework.transaction.support.TransactionSynchronizationManager;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * The lock wraps {@code @Transactional} on the same method: acquired before the transaction
 * begins, released after it commits or rolls back, through both proxy kinds; and
 * {@code distributed-lock.aspect-order} changes that nesting.
 */
class DistributedLockTransactionTests {

    private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, DistributedLockAutoConfiguration.class))
        .withUserConfiguration(Journaled.class);

    @ParameterizedTest(name = "spring.aop.proxy-target-class={0}")
    @ValueSource(booleans = { true, false })
    void transactionRunsInsideTheLock(boolean proxyTargetClass) {
        this.contextRunner.withUserConfiguration(DefaultTransactions.class)
            .withPropertyValues("spring.aop.proxy-target-class=" + proxyTargetClass)
            .run((context) -> {
                Payments payments = context.getBean(Payments.class);
                assertThat(AopUtils.isCglibProxy(payments)).isEqualTo(proxyTargetClass);
                payments.pay("p-1");
                assertThat(context.getBean(Journal.class).entries).containsExactly("obtain payment:p-1 unfair",
                        "wait payment:p-1", "acquire payment:p-1", "begin", "pay p-1 in transaction under lock",
                        "commit", "release payment:p-1");
            });
    }

    @Test
    void rollbackCompletesBeforeTheLockIsReleased() {
        this.contextRunner.withUserConfiguration(DefaultTransactions.class).run((context) -> {
            Payments payments = context.getBean(Payments.class);
            assertThatIllegalStateException().isThrownBy(() -> payments.fail("p-2")).withMessage("declined");
            assertThat(context.getBean(Journal.class).entries).containsExactly("obtain payment:p-2 unfair",
                    "wait payment:p-2", "acquire payment:p-2", "begin", "rollback", "release payment:p-2");
        });
    }

    @Test
    void aspectOrderCanPutTheLockInsideTheTransaction() {
        this.contextRunner.withUserConfiguration(EarlyTransactions.class)
            .withPropertyValues("distributed-lock.aspect-order=2147483647")
            .run((context) -> {
                assertThat(context.getBean(DistributedLockAdvisor.class).getOrder()).isEqualTo(Integer.MAX_VALUE);
                context.getBean(Payments.class).pay("p-3");
                assertThat(context.getBean(Journal.class).entries).containsExactly("begin",
                        "obtain payment:p-3 unfair", "wait payment:p-3", "acquire payment:p-3",
                        "pay p-3 in transaction under lock", "release payment:p-3", "commit");
            });
    }

    static class Journal {

        final List<String> entries = new CopyOnWriteArrayList<>();
    }

    @Configuration(proxyBeanMethods = false)
    static class Journaled {

        @Bean
        Journal journal() {
            return new Journal();
        }

        @Bean
        RecordingLockRegistry recordingLockRegistry(Journal journal) {
            return new RecordingLockRegistry(journal.entries);
        }

        @Bean
        RecordingTransactionManager transactionManager(Journal journal) {
            return new RecordingTransactionManager(journal.entries);
        }

        @Bean
        PaymentService payments(Journal journal) {
            return new PaymentService(journal.entries);
        }
    }

    @Configuration(proxyBeanMethods = false)
    @EnableTransactionManagement
    static class DefaultTransactions {

    }

    @Configuration(proxyBeanMethods = false)
    @EnableTransactionManagement(order = 0)
    static class EarlyTransactions {

    }

    interface Payments {

        void pay(String id);

        void fail(String id);
    }

    static class PaymentService implements Payments {

        private final List<String> journal;

        PaymentService(List<String> journal) {
            this.journal = journal;
        }

        @Override
        @Transactional
        @DistributedLock(key = "'payment:' + #id")
        public void pay(String id) {
            boolean inTransaction = TransactionSynchronizationManager.isActualTransactionActive();
            boolean underLock = LockContext.current().isLockedByCurrentThread();
            this.journal.add("pay " + id + (inTransaction ? " in transaction" : "") + (underLock ? " under lock" : ""));
        }

        @Override
        @Transactional
        @DistributedLock(key = "'payment:' + #id")
        public void fail(String id) {
            throw new IllegalStateException("declined");
        }
    }

    /** Records begin, commit and rollback in the journal the lock registry writes to. */
    static class RecordingTransactionManager extends AbstractPlatformTransactionManager {

        private static final long serialVersionUID = 1L;

        private final transient List<String> journal;

        RecordingTransactionManager(List<String> journal) {
            this.journal = journal;
        }

        @Override
        protected Object doGetTransaction() {
            return new Object();
        }

        @Override
        protected void doBegin(Object transaction, TransactionDefinition definition) {
            this.journal.add("begin");
        }

        @Override
        protected void doCommit(DefaultTransactionStatus status) {
            this.journal.add("commit");
        }

        @Override
        protected void doRollback(DefaultTransactionStatus status) {
            this.journal.add("rollback");
        }
    }
}
