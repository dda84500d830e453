package io.github.distlock.autoconfigure;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import io.github.distlock.FencedLock;
import io.github.distlock.LockAcquisitionException;
import io.github.distlock.LockContext;
import io.github.distlock.LockLostException;
import io.github.distlock.LockRegistry;
import io.github.distlock.annotation.DistributedLock;
import io.github.distlock.annotation.OnTimeout;
import io.github.distlock.aop.LockMetrics;
import io.github.distlock.aop.RecordingLockRegistry;
import io.github.distlock.metrics.LockRegistryMetrics;
import io.github.distlock.metrics.MicrometerLockMetrics;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * The Micrometer meters of {@code @DistributedLock} calls and of the etcd registry: when
 * {@link DistributedLockMetricsAutoConfiguration} configures them, and how calls move them.
 */
class DistributedLockMetricsTests {

    private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(DistributedLockAutoConfiguration.class,
                DistributedLockMetricsAutoConfiguration.class))
        .withPropertyValues("distributed-lock.store=in-memory");

    @Test
    void measuresCallsWhenThereIsAMeterRegistry() {
        this.contextRunner.withUserConfiguration(MeteredJobs.class).run((context) -> {
            assertThat(context).hasSingleBean(LockMetrics.class).hasSingleBean(MicrometerLockMetrics.class);
            MeterRegistry meters = context.getBean(MeterRegistry.class);
            Jobs jobs = context.getBean(Jobs.class);
            assertThat(jobs.activeDuring("order-1")).isEqualTo(1.0);
            assertThat(jobs.activeDuring("order-2")).isEqualTo(1.0);
            assertThat(wait(meters, "acquired", false).count()).isEqualTo(2);
            assertThat(held(meters, "released", false).count()).isEqualTo(2);
            assertThat(meters.get("distributed.lock.active").gauge().value()).isZero();
            assertThat(meters.get("distributed.lock.lost").counter().count()).isZero();
        });
    }

    @Test
    void measuresCallsWithTheMeterRegistryOfSpringBoot() {
        this.contextRunner
            .withConfiguration(AutoConfigurations.of(MetricsAutoConfiguration.class,
                    SimpleMetricsExportAutoConfiguration.class, CompositeMeterRegistryAutoConfiguration.class))
            .withUserConfiguration(PlainJobs.class)
            .run((context) -> {
                assertThat(context).hasSingleBean(MicrometerLockMetrics.class);
                assertThat(context.getBean(Plain.class).key()).isEqualTo("plain");
                assertThat(held(context.getBean(MeterRegistry.class), "released", false).count()).isEqualTo(1);
            });
    }

    @Test
    void keysAreNotTags() {
        this.contextRunner.withUserConfiguration(MeteredJobs.class).run((context) -> {
            Jobs jobs = context.getBean(Jobs.class);
            jobs.activeDuring("order-1");
            jobs.activeDuring("order-2");
            for (Meter meter : context.getBean(MeterRegistry.class).getMeters()) {
                assertThat(meter.getId().getName()).startsWith("distributed.lock.");
                assertThat(meter.getId().getTags()).allSatisfy((tag) -> {
                    assertThat(tag.getKey()).isIn("outcome", "fair");
                    assertThat(tag.getValue()).doesNotContain("order");
                });
            }
        });
    }

    @Test
    void keysBecomeTagsOnlyWhenOptedIntoAndOnlyUpToTheBound() {
        this.contextRunner.withUserConfiguration(MeteredJobs.class)
            .withPropertyValues("distributed-lock.metrics.max-key-tags=2")
            .run((context) -> {
                Jobs jobs = context.getBean(Jobs.class);
                for (String id : new String[] { "order-1", "order-2", "order-3", "order-4", "order-1" }) {
                    jobs.activeDuring(id);
                }
                MeterRegistry meters = context.getBean(MeterRegistry.class);
                assertThat(meters.get("distributed.lock.held").timers())
                    .extracting((timer) -> timer.getId().getTag("key"))
                    .containsExactlyInAnyOrder("job:order-1", "job:order-2", MicrometerLockMetrics.OTHER_KEYS);
                assertThat(meters.get("distributed.lock.held").tag("key", "job:order-1").timer().count()).isEqualTo(2);
                assertThat(meters.get("distributed.lock.held").tag("key", MicrometerLockMetrics.OTHER_KEYS).timer()
                    .count()).isEqualTo(2);
            });
        this.contextRunner.withPropertyValues("distributed-lock.metrics.max-key-tags=-1")
            .run((context) -> assertThat(context).getFailure()
                .rootCause()
                .hasMessageContaining("distributed-lock.metrics.max-key-tags must not be negative, but is '-1'"));
    }

    @Test
    void countsTimeoutsOfSkippedAndFailedCalls() {
        this.contextRunner.withUserConfiguration(MeteredJobs.class).run((context) -> {
            MeterRegistry meters = context.getBean(MeterRegistry.class);
            Jobs jobs = context.getBean(Jobs.class);
            ExecutorService otherInstance = Executors.newSingleThreadExecutor();
            try {
                FencedLock held = context.getBean(LockRegistry.class).obtain("job:busy");
                otherInstance.submit(held::lock).get(5, TimeUnit.SECONDS);
                jobs.tryOnce("busy");
                assertThatExceptionOfType(LockAcquisitionException.class).isThrownBy(() -> jobs.fairOnce("busy"));
                otherInstance.submit(held::unlock).get(5, TimeUnit.SECONDS);
            }
            finally {
                otherInstance.shutdownNow();
            }
            assertThat(wait(meters, "timeout", false).count()).isEqualTo(1);
            assertThat(wait(meters, "timeout", true).count()).isEqualTo(1);
            assertThat(wait(meters, "acquired", false).count()).isZero();
            assertThat(held(meters, "released", false).count()).isZero();
            assertThat(meters.get("distributed.lock.active").gauge().value()).isZero();
        });
    }

    @Test
    void countsEachNestedCall() {
        this.contextRunner.withUserConfiguration(MeteredJobs.class).run((context) -> {
            MeterRegistry meters = context.getBean(MeterRegistry.class);
            assertThat(context.getBean(OuterJobs.class).fairAround("order-1")).isEqualTo(2.0);
            assertThat(wait(meters, "acquired", true).count()).isEqualTo(1);
            assertThat(wait(meters, "acquired", false).count()).isEqualTo(1);
            assertThat(held(meters, "released", true).count()).isEqualTo(1);
            assertThat(held(meters, "released", false).count()).isEqualTo(1);
            assertThat(held(meters, "released", true).totalTime(TimeUnit.NANOSECONDS))
                .isGreaterThanOrEqualTo(held(meters, "released", false).totalTime(TimeUnit.NANOSECONDS));
            assertThat(meters.get("distributed.lock.active").gauge().value()).isZero();
        });
    }

    @Test
    void countsLostHoldsAndFailedWaits() {
        this.contextRunner.withUserConfiguration(MeteredJobs.class, LosingRegistry.class).run((context) -> {
            MeterRegistry meters = context.getBean(MeterRegistry.class);
            assertThatExceptionOfType(LockLostException.class)
                .isThrownBy(() -> context.getBean(OuterJobs.class).loseAndReenter("order-1"));
            assertThat(wait(meters, "acquired", true).count()).isEqualTo(1);
            assertThat(wait(meters, "error", false).count()).isEqualTo(1);
            assertThat(held(meters, "lost", true).count()).isEqualTo(1);
            assertThat(held(meters, "released", true).count()).isZero();
            assertThat(meters.get("distributed.lock.lost").counter().count()).isEqualTo(1);
            assertThat(meters.get("distributed.lock.active").gauge().value()).isZero();
        });
    }

    @Test
    void noMetricsWithoutAMeterRegistry() {
        this.contextRunner.withUserConfiguration(PlainJobs.class).run((context) -> {
            assertThat(context).hasNotFailed().doesNotHaveBean(LockMetrics.class);
            assertThat(context.getBean(Plain.class).key()).isEqualTo("plain");
        });
    }

    @Test
    void worksWithoutMicrometerOnTheClassPath() {
        this.contextRunner.withClassLoader(new FilteredClassLoader("io.micrometer.core"))
            .withUserConfiguration(PlainJobs.class)
            .run((context) -> {
                assertThat(context).hasNotFailed().doesNotHaveBean(LockMetrics.class);
                assertThat(context.getBean(Plain.class).key()).isEqualTo("plain");
            });
    }

    @Test
    void backsOffOnOwnLockMetrics() {
        this.contextRunner.withUserConfiguration(MeteredJobs.class, OwnMetrics.class).run((context) -> {
            assertThat(context).hasSingleBean(LockMetrics.class).doesNotHaveBean(MicrometerLockMetrics.class);
            context.getBean(Jobs.class).tryOnce("order-1");
            assertThat(context.getBean(CountingMetrics.class).waits).isEqualTo(1);
            assertThat(context.getBean(MeterRegistry.class).getMeters()).isEmpty();
        });
    }

    @Test
    void registryMetersNeedAMeterRegistryAndMeasureEveryStore() {
        ApplicationContextRunner etcd = this.contextRunner.withPropertyValues("distributed-lock.store=etcd");
        etcd.run((context) -> assertThat(context).doesNotHaveBean(LockRegistryMetrics.class));
        etcd.withBean(MeterRegistry.class, SimpleMeterRegistry::new)
            .run((context) -> assertThat(context).hasSingleBean(LockRegistryMetrics.class));
        etcd.withBean(MeterRegistry.class, SimpleMeterRegistry::new)
            .withPropertyValues("distributed-lock.store=in-memory")
            .run((context) -> {
                assertThat(context).hasSingleBean(LockRegistryMetrics.class);
                FencedLock lock = context.getBean(LockRegistry.class).obtain("measured");
                lock.lock();
                try {
                    // Bound by Spring Boot's metrics auto-configuration in an application; by hand here.
                    MeterRegistry meters = context.getBean(MeterRegistry.class);
                    context.getBean(LockRegistryMetrics.class).bindTo(meters);
                    assertThat(meters.get("distributed.lock.holds").gauge().value()).isEqualTo(1.0);
                    assertThat(meters.get("distributed.lock.acquisitions").tag("outcome", "acquired")
                        .functionCounter().count()).isEqualTo(1.0);
                    assertThat(meters.get("distributed.lock.session.alive").gauge().value()).isEqualTo(1.0);
                }
                finally {
                    lock.unlock();
                }
            });
    }

    private static Timer wait(MeterRegistry meters, String outcome, boolean fair) {
        return meters.get("distributed.lock.wait").tag("outcome", outcome).tag("fair", Boolean.toString(fair)).timer();
    }

    private static Timer held(MeterRegistry meters, String outcome, boolean fair) {
        return meters.get("distributed.lock.held").tag("outcome", outcome).tag("fair", Boolean.toString(fair)).timer();
    }

    @Configuration(proxyBeanMethods = false)
    static class MeteredJobs {

        @Bean
        SimpleMeterRegistry meterRegistry() {
            return new SimpleMeterRegistry();
        }

        @Bean
        Jobs jobs(MeterRegistry meterRegistry) {
            return new Jobs(meterRegistry);
        }

        @Bean
        OuterJobs outerJobs(Jobs jobs, ObjectProvider<LockRegistry> lockRegistry) {
            return new OuterJobs(jobs, lockRegistry);
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class LosingRegistry {

        @Bean
        RecordingLockRegistry lockRegistry() {
            return new RecordingLockRegistry();
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class OwnMetrics {

        @Bean
        CountingMetrics ownLockMetrics() {
            return new CountingMetrics();
        }
    }

    static class CountingMetrics implements LockMetrics {

        int waits;

        @Override
        public void waited(String key, boolean fair, WaitOutcome outcome, long nanos) {
            this.waits++;
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class PlainJobs {

        @Bean
        Plain plain() {
            return new Plain();
        }
    }

    public static class Jobs {

        private final MeterRegistry meters;

        Jobs(MeterRegistry meters) {
            this.meters = meters;
        }

        @DistributedLock(key = "'job:' + #p0")
        public double activeDuring(String id) {
            return this.meters.get("distributed.lock.active").gauge().value();
        }

        @DistributedLock(key = "'job:' + #p0", waitTimeout = "0", onTimeout = OnTimeout.SKIP)
        public void tryOnce(String id) {
        }

        @DistributedLock(key = "'job:' + #p0", waitTimeout = "0", fair = true)
        public String fairOnce(String id) {
            return "ran";
        }
    }

    public static class OuterJobs {

        private final Jobs jobs;

        private final ObjectProvider<LockRegistry> registry;

        OuterJobs(Jobs jobs, ObjectProvider<LockRegistry> registry) {
            this.jobs = jobs;
            this.registry = registry;
        }

        @DistributedLock(key = "'job:' + #p0", fair = true)
        public double fairAround(String id) {
            return this.jobs.activeDuring(id);
        }

        @DistributedLock(key = "'job:' + #p0", fair = true)
        public double loseAndReenter(String id) {
            ((RecordingLockRegistry) this.registry.getObject()).loseHoldOf(LockContext.current().getKey());
            return this.jobs.activeDuring(id);
        }
    }

    /** Public, so that a CGLIB subclass defined by a {@link FilteredClassLoader} can extend it. */
    public static class Plain {

        @DistributedLock(key = "'plain'")
        public String key() {
            return LockContext.current().getKey();
        }
    }
}
