package io.github.distlock.aop;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import io.github.distlock.FencedLock;
import io.github.distlock.InMemoryLockRegistry;
import io.github.distlock.LockRegistry;
import io.github.distlock.annotation.DistributedLock;
import io.github.distlock.autoconfigure.DistributedLockAutoConfiguration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A {@link LockMetrics} that throws, against its contract, changes nothing of a locked call: the
 * lock is released and the call's result stands; the failure is logged.
 */
@ExtendWith(OutputCaptureExtension.class)
class DistributedLockFailingMetricsTests {

    private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(DistributedLockAutoConfiguration.class))
        .withUserConfiguration(FailingMetrics.class);

    @Test
    void aCallWhoseMetricsThrowReleasesItsLockAndKeepsItsResult(CapturedOutput output) {
        this.contextRunner.run((context) -> {
            Job job = context.getBean(Job.class);
            LockRegistry registry = context.getBean(LockRegistry.class);
            assertThat(job.run()).isEqualTo("done");
            assertThat(job.run()).isEqualTo("done");
            // Taken by another thread: the calls left nothing held.
            CompletableFuture<Boolean> free = CompletableFuture.supplyAsync(() -> {
                FencedLock lock = registry.obtain("metered", false);
                try {
                    boolean acquired = lock.tryLock(5, TimeUnit.SECONDS);
                    if (acquired) {
                        lock.unlock();
                    }
                    return acquired;
                }
                catch (InterruptedException ex) {
                    Thread.currentThread().interrupt();
                    return false;
                }
            });
            assertThat(free.get(10, TimeUnit.SECONDS)).as("taken by another thread").isTrue();
            assertThat(output.getOut()).containsOnlyOnce("Recording @DistributedLock metrics failed")
                .contains("metrics broken (test)");
        });
    }

    @Configuration(proxyBeanMethods = false)
    static class FailingMetrics {

        @Bean
        LockRegistry lockRegistry() {
            return new InMemoryLockRegistry();
        }

        @Bean
        LockMetrics lockMetrics() {
            return new LockMetrics() {

                @Override
                public void waited(String key, boolean fair, WaitOutcome outcome, long nanos) {
                    throw new IllegalStateException("metrics broken (test)");
                }

                @Override
                public void held(String key, boolean fair, HoldOutcome outcome, long nanos) {
                    throw new IllegalStateException("metrics broken (test)");
                }
            };
        }

        @Bean
        Job job() {
            return new Job();
        }
    }

    static class Job {

        @DistributedLock(key = "'metered'")
        public String run() {
            return "done";
        }
    }
}
