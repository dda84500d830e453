package io.github.distlock.aop;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.github.distlock.FencedLock;
import io.github.distlock.LockAcquisitionException;
import io.github.distlock.annotation.DistributedLock;
import io.github.distlock.annotation.OnTimeout;
import io.github.distlock.aop.LockMetrics.WaitOutcome;
import io.github.distlock.autoconfigure.DistributedLockAutoConfiguration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * What {@code @DistributedLock} does when the lock store fails while a call acquires its lock:
 * {@link OnTimeout#SKIP} calls are skipped with one warning per outage and one line when the store
 * answers again, {@link OnTimeout#FAIL} calls throw, and interrupts propagate either way.
 */
class DistributedLockStoreFailureTests {

    private static final String STORE_DOWN = "etcd unreachable (test)";

    private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(DistributedLockAutoConfiguration.class))
        .withUserConfiguration(Jobs.class);

    private final Logger logger = (Logger) LoggerFactory.getLogger(DistributedLockInterceptor.class);

    private final ListAppender<ILoggingEvent> events = new ListAppender<>();

    private Level levelBefore;

    @BeforeEach
    void captureLogs() {
        this.levelBefore = this.logger.getLevel();
        this.logger.setLevel(Level.INFO);
        this.events.start();
        this.logger.addAppender(this.events);
    }

    @AfterEach
    void releaseLogs() {
        this.logger.detachAppender(this.events);
        this.logger.setLevel(this.levelBefore);
    }

    @Test
    void skipCallsAreSkippedWithOneWarningPerOutageAndOneLineOnRecovery() {
        this.contextRunner.run((context) -> {
            Job job = job(context);
            RecordingLockRegistry registry = registry(context);
            registry.failAcquisitions(STORE_DOWN);
            for (int tick = 0; tick < 5; tick++) {
                job.hourly();
            }
            assertThat(job.runs()).isZero();
            assertThat(registry.journal()).filteredOn("fail hourly-report"::equals).hasSize(5);
            assertThat(logged(Level.WARN)).hasSize(1);
            ILoggingEvent warning = logged(Level.WARN).get(0);
            assertThat(warning.getFormattedMessage()).contains("'hourly-report'")
                .contains(Job.class.getName() + ".hourly()")
                .contains(STORE_DOWN);
            assertThat(warning.getThrowableProxy()).isNull();
            assertThat(logged(Level.INFO)).isEmpty();
            assertThat(logged(Level.ERROR)).isEmpty();

            registry.recover();
            job.hourly();
            job.hourly();
            assertThat(job.runs()).isEqualTo(2);
            assertThat(logged(Level.INFO)).singleElement()
                .satisfies((recovered) -> assertThat(recovered.getFormattedMessage()).contains("'hourly-report'")
                    .contains(Job.class.getName() + ".hourly()"));
            assertThat(logged(Level.WARN)).hasSize(1);

            registry.failAcquisitions(STORE_DOWN);
            job.hourly();
            job.hourly();
            assertThat(job.runs()).isEqualTo(2);
            assertThat(logged(Level.WARN)).as("a new outage warns again").hasSize(2);
        });
    }

    @Test
    void timeoutAfterAnOutageEndsItToo() {
        this.contextRunner.run((context) -> {
            Job job = job(context);
            RecordingLockRegistry registry = registry(context);
            registry.failAcquisitions(STORE_DOWN);
            job.hourly();
            registry.recover();
            CountDownLatch held = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            CompletableFuture<Void> otherInstance = CompletableFuture.runAsync(() -> {
                FencedLock lock = registry.obtain("hourly-report");
                lock.lock();
                try {
                    held.countDown();
                    release.await(10, TimeUnit.SECONDS);
                }
                catch (InterruptedException ex) {
                    Thread.currentThread().interrupt();
                }
                finally {
                    lock.unlock();
                }
            });
            assertThat(held.await(5, TimeUnit.SECONDS)).isTrue();
            job.hourly();
            job.hourly();
            assertThat(job.runs()).isZero();
            assertThat(logged(Level.INFO)).singleElement()
                .satisfies((recovered) -> assertThat(recovered.getFormattedMessage()).contains("'hourly-report'")
                    .contains("held elsewhere"));

            registry.failAcquisitions(STORE_DOWN);
            job.hourly();
            assertThat(logged(Level.WARN)).as("the next outage warns again").hasSize(2);
            release.countDown();
            otherInstance.get(5, TimeUnit.SECONDS);
        });
    }

    @Test
    void outageIsTrackedPerMethod() {
        this.contextRunner.run((context) -> {
            Job job = job(context);
            registry(context).failAcquisitions(STORE_DOWN);
            job.hourly();
            job.nightly();
            job.hourly();
            job.nightly();
            assertThat(logged(Level.WARN)).extracting(ILoggingEvent::getFormattedMessage)
                .satisfiesExactlyInAnyOrder((message) -> assertThat(message).contains(".hourly()"),
                        (message) -> assertThat(message).contains(".nightly()"));
        });
    }

    @Test
    void skippedCallIsMeasuredAsAnError() {
        this.contextRunner.run((context) -> {
            registry(context).failAcquisitions(STORE_DOWN);
            job(context).hourly();
            assertThat(context.getBean(RecordedWaits.class).outcomes).containsExactly(WaitOutcome.ERROR);
        });
    }

    @Test
    void failCallsKeepThrowingTheStoreFailure() {
        this.contextRunner.run((context) -> {
            Job job = job(context);
            registry(context).failAcquisitions(STORE_DOWN);
            for (int call = 0; call < 2; call++) {
                assertThatExceptionOfType(LockAcquisitionException.class).isThrownBy(() -> job.report("r-1"))
                    .withMessageContaining("'report:r-1'")
                    .withMessageContaining(STORE_DOWN);
            }
            assertThat(job.runs()).isZero();
            assertThat(logged(Level.WARN)).isEmpty();
            assertThat(context.getBean(RecordedWaits.class).outcomes).containsExactly(WaitOutcome.ERROR,
                    WaitOutcome.ERROR);
        });
    }

    @Test
    void interruptedSkipCallStillThrowsAndKeepsTheInterruptStatus() {
        this.contextRunner.run((context) -> {
            Job job = job(context);
            Thread.currentThread().interrupt();
            try {
                assertThatExceptionOfType(LockAcquisitionException.class).isThrownBy(job::hourly)
                    .withMessageContaining("interrupted")
                    .withCauseInstanceOf(InterruptedException.class);
                assertThat(Thread.currentThread().isInterrupted()).isTrue();
            }
            finally {
                Thread.interrupted();
            }
            assertThat(job.runs()).isZero();
            assertThat(logged(Level.WARN)).isEmpty();
        });
    }

    private List<ILoggingEvent> logged(Level level) {
        return this.events.list.stream().filter((event) -> event.getLevel() == level).toList();
    }

    private static Job job(AssertableApplicationContext context) {
        return context.getBean(Job.class);
    }

    private static RecordingLockRegistry registry(AssertableApplicationContext context) {
        return context.getBean(RecordingLockRegistry.class);
    }

    @Configuration(proxyBeanMethods = false)
    static class Jobs {

        @Bean
        RecordingLockRegistry recordingLockRegistry() {
            return new RecordingLockRegistry();
        }

        @Bean
        RecordedWaits recordedWaits() {
            return new RecordedWaits();
        }

        @Bean
        Job job() {
            return new Job();
        }
    }

    static class RecordedWaits implements LockMetrics {

        final List<WaitOutcome> outcomes = new CopyOnWriteArrayList<>();

        @Override
        public void waited(String key, boolean fair, WaitOutcome outcome, long nanos) {
            this.outcomes.add(outcome);
        }
    }

    static class Job {

        private final AtomicInteger runs = new AtomicInteger();

        @DistributedLock(key = "'hourly-report'", waitTimeout = "0", onTimeout = OnTimeout.SKIP)
        public void hourly() {
            this.runs.incrementAndGet();
        }

        @DistributedLock(key = "'nightly-report'", waitTimeout = "0", onTimeout = OnTimeout.SKIP)
        public void nightly() {
            this.runs.incrementAndGet();
        }

        @DistributedLock(key = "'report:' + #id", waitTimeout = "0")
        public void report(String id) {
            this.runs.incrementAndGet();
        }

        public int runs() {
            return this.runs.get();
        }
    }
}
