package io.github.distlock.autoconfigure;

import io.github.distlock.InspectableLockRegistry;
import io.github.distlock.aop.LockMetrics;
import io.github.distlock.metrics.LockRegistryMetrics;
import io.github.distlock.metrics.MicrometerLockMetrics;
import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Auto-configuration of Micrometer meters of {@code @DistributedLock} calls and of the lock
 * registry (any store; with several registries, the single or primary one), when Micrometer is
 * on the class path and the application has a {@link MeterRegistry}.
 * The only auto-configuration that loads a Micrometer type.
 *
 * <p>Runs after Spring Boot's meter registries are defined, so that the condition on a
 * {@code MeterRegistry} sees them, and after {@link DistributedLockAutoConfiguration}, which
 * defines the lock registry. The {@code @DistributedLock} advice looks up its {@link LockMetrics}
 * on its first call, so it finds the one defined here although it was created earlier.
 */
@AutoConfiguration(after = DistributedLockAutoConfiguration.class,
        afterName = "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration")
@ConditionalOnClass(MeterRegistry.class)
@ConditionalOnDistributedLockEnabled
@ConditionalOnBean(MeterRegistry.class)
@EnableConfigurationProperties(DistributedLockProperties.class)
public final class DistributedLockMetricsAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean
    LockMetrics distributedLockMetrics(MeterRegistry meterRegistry, DistributedLockProperties properties) {
        return new MicrometerLockMetrics(meterRegistry, properties.getMetrics().getMaxKeyTags());
    }

    // A single candidate (one registry, or a @Primary one): with several, injecting one would fail start-up.
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnSingleCandidate(InspectableLockRegistry.class)
    static class RegistryMetricsConfiguration {

        @Bean
        @ConditionalOnMissingBean
        LockRegistryMetrics lockRegistryMetrics(InspectableLockRegistry registry) {
            return new LockRegistryMetrics(registry);
        }
    }
}
